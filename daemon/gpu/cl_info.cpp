#include "gpu/cl_info.hpp"

namespace framecl::gpu {
namespace {

// Both queries share the size-then-value protocol of clGet*Info.
template <typename Object, typename Param, typename Query>
std::string queryString(Query query, Object object, Param param)
{
    size_t size = 0;
    if (query(object, param, 0, nullptr, &size) != CL_SUCCESS || size == 0)
        return {};
    std::string text(size, '\0');
    if (query(object, param, size, text.data(), nullptr) != CL_SUCCESS)
        return {};
    if (const size_t end = text.find('\0'); end != std::string::npos)
        text.resize(end);
    // Some drivers pad names and versions with blanks.
    while (!text.empty() && text.back() == ' ')
        text.pop_back();
    return text;
}

} // namespace

std::string deviceInfoString(cl_device_id device, cl_device_info param)
{
    return queryString(clGetDeviceInfo, device, param);
}

std::string platformInfoString(cl_platform_id platform, cl_platform_info param)
{
    return queryString(clGetPlatformInfo, platform, param);
}

} // namespace framecl::gpu
