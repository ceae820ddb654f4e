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

// How a dispatch is cut: `bands` along its tile axis, each cut into `columns` along the
// cross axis (1 where the bands suffice or the cross axis may not be cut).
struct TileGrid {
    size_t axis = 0, granule = 0;        // the tile axis and its granule
    size_t cross = 0, cross_granule = 0; // the cross axis and its granule
    size_t bands = 1, columns = 1;
};

// `extent`, costing `ns` in all, cut into parts of whole granules so that each takes at
// most `target_ns`: as many granules to a part as fit under the target, or one granule
// to a part where none fits (and then each part is still over the target).
struct AxisCut {
    size_t parts;
    bool over;
};

AxisCut cutUnder(size_t extent, size_t granule, double ns, double target_ns)
{
    const size_t granules = ceilDiv(extent, granule);
    const double granule_ns = ns * double(granule) / double(extent);
    const auto fitting = size_t(target_ns / granule_ns);
    return fitting == 0 ? AxisCut{granules, true} : AxisCut{ceilDiv(granules, fitting), false};
}

TileGrid gridOf(const DispatchShape& shape, double predicted_ns, double target_ns)
{
    TileGrid grid;
    const auto axis = tileAxis(shape);
    if (!axis || !(target_ns > 0) || !(predicted_ns > target_ns))
        return grid;
    grid.axis = *axis;
    grid.granule = tileGranule(shape, grid.axis, predicted_ns, target_ns);
    const AxisCut bands = cutUnder(shape.global[grid.axis], grid.granule, predicted_ns, target_ns);
    grid.bands = bands.parts;
    const auto cross = crossAxis(shape);
    if (!bands.over || !cross)
        return grid;
    // Bands of one granule still over the target: each cut into columns the same way.
    grid.cross = *cross;
    const double band_ns = predicted_ns * double(grid.granule) / double(shape.global[grid.axis]);
    grid.cross_granule = tileGranule(shape, grid.cross, band_ns, target_ns);
    grid.columns = cutUnder(shape.global[grid.cross], grid.cross_granule, band_ns, target_ns).parts;
    return grid;
}

// gridOf() within max_tiles_per_dispatch: bands first, as many as allowed, then as many
// columns in each as the rest allows.
TileGrid cappedGridOf(const DispatchShape& shape, double predicted_ns, double target_ns, uint64_t min_items)
{
    TileGrid grid = gridOf(shape, predicted_ns, target_ns);
    size_t most = max_tiles_per_dispatch;
    if (min_items > 0)
        most = std::min<size_t>(most, std::max<uint64_t>(workItems(shape.global) / min_items, 1));
    grid.bands = std::min(grid.bands, most);
    grid.columns = std::min(grid.columns, most / grid.bands);
    return grid;
}

// `parts` consecutive (start, extent) pairs covering `extent`: its granules shared out
// evenly, the first parts taking one more where they do not divide, the last ending at
// `extent` (whose last granule may be partial when the runtime chooses the work-group).
std::vector<std::pair<size_t, size_t>> split(size_t extent, size_t granule, size_t parts)
{
    const size_t granules = ceilDiv(extent, granule);
    std::vector<std::pair<size_t, size_t>> split;
    split.reserve(parts);
    size_t start = 0;
    for (size_t i = 0; i < parts; ++i) {
        const size_t share = granules / parts + (i < granules % parts ? 1 : 0);
        const size_t end = i + 1 == parts ? extent : start + share * granule;
        split.emplace_back(start, end - start);
        start = end;
    }
    return split;
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

std::optional<size_t> crossAxis(const DispatchShape& shape)
{
    const auto axis = tileAxis(shape);
    if (!axis || *axis != 1 || !(shape.tileable_axes & FRAMECL_AXIS_X) || shape.global[0] == 0)
        return std::nullopt;
    return 0;
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

uint32_t tileCount(const DispatchShape& shape, double predicted_ns, double target_ns, uint64_t min_items)
{
    const TileGrid grid = cappedGridOf(shape, predicted_ns, target_ns, min_items);
    return uint32_t(grid.bands * grid.columns);
}

std::vector<Tile> planTiles(const DispatchShape& shape, double predicted_ns, double target_ns, uint64_t min_items)
{
    const TileGrid grid = cappedGridOf(shape, predicted_ns, target_ns, min_items);
    if (grid.bands * grid.columns == 1)
        return {whole(shape)};
    const auto bands = split(shape.global[grid.axis], grid.granule, grid.bands);
    const auto columns = grid.columns > 1 ? split(shape.global[grid.cross], grid.cross_granule, grid.columns)
                                          : std::vector<std::pair<size_t, size_t>>{};
    std::vector<Tile> tiles;
    tiles.reserve(grid.bands * grid.columns);
    for (const auto& [band_start, band_extent] : bands) {
        Tile band = whole(shape);
        band.offset[grid.axis] = band_start;
        band.global[grid.axis] = band_extent;
        if (columns.empty()) {
            tiles.push_back(band);
            continue;
        }
        for (const auto& [column_start, column_extent] : columns) {
            Tile tile = band;
            tile.offset[grid.cross] = column_start;
            tile.global[grid.cross] = column_extent;
            tiles.push_back(tile);
        }
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

std::vector<PartRange> planParts(const std::vector<double>& tile_ns, const std::vector<Cut>& cuts,
                                 double target_ns, uint32_t max_tiles)
{
    std::vector<PartRange> parts;
    double sum = 0;
    for (uint32_t t = 0; t < tile_ns.size(); ++t) {
        const bool over = (target_ns > 0 && sum + tile_ns[t] > target_ns) ||
                          (max_tiles > 0 && !parts.empty() && parts.back().end - parts.back().first >= max_tiles);
        if (parts.empty() || cuts[t] == Cut::Must || (cuts[t] == Cut::May && over)) {
            parts.push_back({t, t});
            sum = 0;
        }
        parts.back().end = t + 1;
        sum += tile_ns[t];
    }
    return parts;
}

uint64_t fillItems(bool gpu, uint32_t compute_units, size_t max_work_group_size)
{
    return gpu ? uint64_t(compute_units) * max_work_group_size * 2 : 0;
}

} // namespace framecl::pipeline
