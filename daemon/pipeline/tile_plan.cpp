#include "pipeline/tile_plan.hpp"

#include <algorithm>
#include <cmath>

#include "framecl/plugin.h"

namespace framecl::pipeline {
namespace {

size_t ceilDiv(size_t a, size_t b)
{
    return (a + b - 1) / b;
}

// The whole dispatch as its one tile.
Tile whole(const DispatchShape& shape)
{
    return Tile{{0, 0}, shape.global};
}

} // namespace

std::optional<size_t> tileAxis(const DispatchShape& shape)
{
    if (shape.dims > 1 && (shape.tileable_axes & FRAMECL_AXIS_Y) && shape.global[1] > 0)
        return 1;
    if ((shape.tileable_axes & FRAMECL_AXIS_X) && shape.global[0] > 0)
        return 0;
    return std::nullopt;
}

uint64_t workItems(const std::array<size_t, 2>& global)
{
    return uint64_t(global[0]) * global[1];
}

size_t tileGranule(const DispatchShape& shape, size_t axis, double predicted_ns, double target_ns)
{
    if (shape.local[axis] > 0)
        return shape.local[axis];
    const double per_granule = predicted_ns * double(default_tile_granule) / double(std::max<size_t>(shape.global[axis], 1));
    return target_ns > 0 && per_granule > target_ns ? 1 : default_tile_granule;
}

uint32_t tileCount(const DispatchShape& shape, double predicted_ns, double target_ns)
{
    const auto axis = tileAxis(shape);
    if (!axis || !(target_ns > 0) || !(predicted_ns > target_ns))
        return 1;
    const size_t granules = ceilDiv(shape.global[*axis], tileGranule(shape, *axis, predicted_ns, target_ns));
    const double wanted = std::ceil(predicted_ns / target_ns);
    return uint32_t(std::min<double>(wanted, double(granules)));
}

std::vector<Tile> planTiles(const DispatchShape& shape, double predicted_ns, double target_ns)
{
    const uint32_t count = tileCount(shape, predicted_ns, target_ns);
    if (count == 1)
        return {whole(shape)};
    const size_t axis = *tileAxis(shape);
    const size_t extent = shape.global[axis];
    const size_t granule = tileGranule(shape, axis, predicted_ns, target_ns);
    const size_t granules = ceilDiv(extent, granule);

    std::vector<Tile> tiles;
    tiles.reserve(count);
    size_t start = 0;
    for (uint32_t i = 0; i < count; ++i) {
        const size_t share = granules / count + (i < granules % count ? 1 : 0);
        // The last granule may be partial (an extent that is not a multiple of the
        // granule when the runtime chooses the work-group): the last tile ends there.
        const size_t end = i + 1 == count ? extent : start + share * granule;
        Tile tile = whole(shape);
        tile.offset[axis] = start;
        tile.global[axis] = end - start;
        tiles.push_back(tile);
        start = end;
    }
    return tiles;
}

Tile calibrationSlice(const DispatchShape& shape, size_t at_most_granules)
{
    const auto axis = tileAxis(shape);
    if (!axis)
        return whole(shape);
    const size_t extent = shape.global[*axis];
    const size_t granule = tileGranule(shape, *axis);
    const size_t granules = ceilDiv(extent, granule);
    const size_t taken = std::max<size_t>(1, std::min(granules / 8, at_most_granules));
    if (taken >= granules)
        return whole(shape);
    Tile slice = whole(shape);
    slice.offset[*axis] = (granules - taken) / 2 * granule;
    slice.global[*axis] = std::min(taken * granule, extent - slice.offset[*axis]);
    return slice;
}

} // namespace framecl::pipeline
