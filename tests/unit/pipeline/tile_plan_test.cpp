// The tile plan of the kernel-time budget (pipeline/tile_plan.hpp), with no device:
// how many tiles, along which axis, of which extents.
#include <numeric>

#include <doctest/doctest.h>

#include "framecl/plugin.h"
#include "pipeline/tile_plan.hpp"

using namespace framecl::pipeline;

namespace {

// Rows of each tile along Y, after checking that the tiles cover the dispatch in order,
// each spanning the whole X extent.
std::vector<size_t> rowsOf(const std::vector<Tile>& tiles, const DispatchShape& shape)
{
    std::vector<size_t> rows;
    size_t next = 0;
    for (const Tile& tile : tiles) {
        CHECK(tile.offset[0] == 0);
        CHECK(tile.global[0] == shape.global[0]);
        CHECK(tile.offset[1] == next);
        next += tile.global[1];
        rows.push_back(tile.global[1]);
    }
    CHECK(next == shape.global[1]);
    return rows;
}

} // namespace

TEST_CASE("tiles are ceil(predicted / target), along Y, each a multiple of the local size")
{
    const DispatchShape shape{2, {640, 480}, {16, 16}, FRAMECL_AXIS_X | FRAMECL_AXIS_Y};
    // 4.5 targets: 5 tiles of 30 work-groups' rows shared out 6, 6, 6, 6, 6.
    const auto tiles = planTiles(shape, 4500, 1000);
    REQUIRE(tiles.size() == 5);
    CHECK(rowsOf(tiles, shape) == std::vector<size_t>{96, 96, 96, 96, 96});

    // 7 tiles of 30 groups: the first two take one group more.
    CHECK(rowsOf(planTiles(shape, 6500, 1000), shape) == std::vector<size_t>{80, 80, 64, 64, 64, 64, 64});
}

TEST_CASE("a dispatch predicted within the target, or with no target, runs whole")
{
    const DispatchShape shape{2, {640, 480}, {16, 16}, FRAMECL_AXIS_Y};
    for (const auto& tiles : {planTiles(shape, 1000, 1000), planTiles(shape, 5000, 0), planTiles(shape, 0, 1000)}) {
        REQUIRE(tiles.size() == 1);
        CHECK(tiles[0] == Tile{{0, 0}, {640, 480}});
    }
}

TEST_CASE("without a local size, tiles are multiples of 8 rows and the last takes the rest")
{
    const DispatchShape shape{2, {641, 479}, {0, 0}, FRAMECL_AXIS_Y};
    // 60 granules of 8 rows, the last of 7: 3 tiles of 20 granules.
    CHECK(rowsOf(planTiles(shape, 2500, 1000), shape) == std::vector<size_t>{160, 160, 159});
}

TEST_CASE("never more tiles than granules along the tile axis")
{
    const DispatchShape shape{2, {641, 20}, {0, 0}, FRAMECL_AXIS_Y};
    // 2.5 targets fit in 3 granules of 8 rows: rows 8, 8 and 4.
    CHECK(tileCount(shape, 2500, 1000) == 3);
    CHECK(rowsOf(planTiles(shape, 2500, 1000), shape) == std::vector<size_t>{8, 8, 4});
    // More than a target in 8 rows: single rows, at most one tile each.
    CHECK(tileCount(shape, 1e9, 1000) == 20);
    CHECK(rowsOf(planTiles(shape, 12000, 1000), shape) == std::vector<size_t>{2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1});

    const DispatchShape grouped{2, {64, 32}, {8, 16}, FRAMECL_AXIS_Y};
    CHECK(rowsOf(planTiles(grouped, 1e9, 1), grouped) == std::vector<size_t>{16, 16});
}

TEST_CASE("a dispatch tileable only along X is cut into columns")
{
    const DispatchShape shape{2, {96, 50}, {32, 1}, FRAMECL_AXIS_X};
    REQUIRE(tileAxis(shape) == 0);
    const auto tiles = planTiles(shape, 3000, 1000);
    REQUIRE(tiles.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
        CHECK(tiles[i].offset == std::array<size_t, 2>{32 * i, 0});
        CHECK(tiles[i].global == std::array<size_t, 2>{32, 50});
    }

    const DispatchShape line{1, {1000, 1}, {0, 0}, FRAMECL_AXIS_X | FRAMECL_AXIS_Y};
    REQUIRE(tileAxis(line) == 0); // a one-dimensional dispatch has no Y to cut
    CHECK(planTiles(line, 2000, 1000).size() == 2);
}

TEST_CASE("a dispatch with no tileable axis runs whole whatever its prediction")
{
    const DispatchShape shape{2, {640, 480}, {0, 0}, 0};
    CHECK_FALSE(tileAxis(shape).has_value());
    CHECK(tileCount(shape, 1e12, 1000) == 1);
    CHECK(planTiles(shape, 1e12, 1000) == std::vector<Tile>{Tile{{0, 0}, {640, 480}}});
    CHECK(calibrationSlice(shape) == Tile{{0, 0}, {640, 480}});
}

TEST_CASE("the calibration slice is an eighth of the tile axis, or less, from its middle, in whole granules")
{
    const DispatchShape shape{2, {641, 479}, {0, 0}, FRAMECL_AXIS_Y};
    // 60 granules: 7 taken, starting at granule (60 - 7) / 2 = 26.
    CHECK(calibrationSlice(shape) == Tile{{0, 208}, {641, 56}});
    // Capped: one granule, from granule (60 - 1) / 2 = 29.
    CHECK(calibrationSlice(shape, 1) == Tile{{0, 232}, {641, 8}});
    CHECK(calibrationSlice(shape, 3) == Tile{{0, 224}, {641, 24}});

    const DispatchShape small{2, {64, 20}, {0, 0}, FRAMECL_AXIS_Y};
    CHECK(calibrationSlice(small) == Tile{{0, 8}, {64, 8}}); // at least one granule

    const DispatchShape one{2, {64, 6}, {0, 0}, FRAMECL_AXIS_Y};
    CHECK(calibrationSlice(one) == Tile{{0, 0}, {64, 6}}); // one granule: the whole dispatch
}

TEST_CASE("the tile target leaves a margin under the budget")
{
    CHECK(tileTarget(0) == 0);
    CHECK(tileTarget(8'000'000) == doctest::Approx(6'800'000));
}
