#include "config/config.hpp"

namespace framecl::config {

std::string ConfigErrors::joined() const
{
    std::string text;
    for (const std::string& problem : problems) {
        if (!text.empty())
            text += '\n';
        text += problem;
    }
    return text;
}

} // namespace framecl::config
