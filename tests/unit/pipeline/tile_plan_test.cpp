// The tile plan of the kernel-time budget (pipeline/tile_plan.hpp), with no device:
// how many tiles, along which axis, of which extents.
#include <algorithm>
#include <numeric>

#include <doctest/doctest.h>

#include "framecl/plugin.h"
#include "pipeline/dispatch_cost.hpp"
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

TEST_CASE("tiles are bands along Y of as many work groups' rows as fit under the target")
{
    const DispatchShape shape{2, {640, 480}, {16, 16}, FRAMECL_AXIS_X | FRAMECL_AXIS_Y};
    // 4.5 targets over 30 rows of groups, 150 each: 6 fit, so 5 tiles of 6.
    const auto tiles = planTiles(shape, 4500, 1000);
    REQUIRE(tiles.size() == 5);
    CHECK(rowsOf(tiles, shape) == std::vector<size_t>{96, 96, 96, 96, 96});

    // 6.5 targets, 217 a row of groups: 4 fit, so 8 tiles, the 30 rows shared out
    // 4, 4, 4, 4, 4, 4, 3, 3 (7 tiles — ceil(6.5) — would give some 5 rows, over the target).
    CHECK(rowsOf(planTiles(shape, 6500, 1000), shape) == std::vector<size_t>{64, 64, 64, 64, 64, 64, 48, 48});
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
    // 12 targets in 20 rows, 600 a row: one fits, so one row to a tile.
    CHECK(rowsOf(planTiles(shape, 12000, 1000), shape) == std::vector<size_t>(20, 1));
    // 9 targets, 450 a row: two rows to a tile.
    CHECK(rowsOf(planTiles(shape, 9000, 1000), shape) == std::vector<size_t>(10, 2));

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
    // 125 granules of 8 at 16 each: 62 fit (two halves of 62.5 would not be whole granules).
    CHECK(planTiles(line, 2000, 1000).size() == 3);
}

TEST_CASE("bands of one granule still over the target are cut into columns where X is tileable")
{
    // 60 targets in 20 rows: single-row bands of 3 targets each (8 rows would be 24),
    // each cut into columns of whole 8-column granules, 37.4 each: 26 fit, so the 81
    // granules go in 4 columns of 21, 20, 20 and 20 (the last ending at 641).
    const DispatchShape shape{2, {641, 20}, {0, 0}, FRAMECL_AXIS_X | FRAMECL_AXIS_Y};
    REQUIRE(crossAxis(shape) == 0);
    CHECK(tileCount(shape, 60'000, 1000) == 80);
    const auto tiles = planTiles(shape, 60'000, 1000);
    REQUIRE(tiles.size() == 80);
    const std::array<size_t, 4> starts{0, 168, 328, 488}, widths{168, 160, 160, 153};
    for (size_t i = 0; i < tiles.size(); ++i) {
        CAPTURE(i);
        CHECK(tiles[i].offset == std::array<size_t, 2>{starts[i % 4], i / 4});
        CHECK(tiles[i].global == std::array<size_t, 2>{widths[i % 4], 1});
    }

    // The same dispatch tileable only along Y stops at its 20 rows.
    const DispatchShape rows_only{2, {641, 20}, {0, 0}, FRAMECL_AXIS_Y};
    CHECK_FALSE(crossAxis(rows_only).has_value());
    CHECK(tileCount(rows_only, 60'000, 1000) == 20);
}

TEST_CASE("a grid covers the dispatch once, in whole work groups, and stops at the granules")
{
    // Mean shift at 3264x2448 on two CPU cores: 4.9 s in work groups of 32x4 under a
    // 1.7 ms target. A band of one group's rows is 8 ms, so 612 bands, each of 102
    // groups at 78.5 us: 21 fit, so 5 columns (3060 tiles).
    const DispatchShape shape{2, {3264, 2448}, {32, 4}, FRAMECL_AXIS_X | FRAMECL_AXIS_Y};
    const auto tiles = planTiles(shape, 4.9e9, 1.7e6);
    REQUIRE(tiles.size() == 3060);
    CHECK(tileCount(shape, 4.9e9, 1.7e6) == 3060);
    std::vector<uint8_t> covered(3264 * 2448, 0);
    for (const Tile& tile : tiles) {
        CHECK(tile.offset[0] % 32 == 0);
        CHECK(tile.offset[1] % 4 == 0);
        CHECK(tile.global[0] % 32 == 0);
        CHECK(tile.global[1] % 4 == 0);
        for (size_t y = tile.offset[1]; y < tile.offset[1] + tile.global[1]; ++y)
            for (size_t x = tile.offset[0]; x < tile.offset[0] + tile.global[0]; ++x)
                ++covered[y * 3264 + x];
    }
    CHECK(std::all_of(covered.begin(), covered.end(), [](uint8_t n) { return n == 1; }));
    // Band by band, column by column: the first band's five columns of 21, 21, 20, 20
    // and 20 groups, then the second band.
    CHECK(tiles[0].global == std::array<size_t, 2>{672, 4});
    CHECK(tiles[4].offset == std::array<size_t, 2>{2624, 0});
    CHECK(tiles[5].offset == std::array<size_t, 2>{0, 4});

    // No more tiles than work groups, however slow.
    const DispatchShape grouped{2, {64, 32}, {8, 16}, FRAMECL_AXIS_X | FRAMECL_AXIS_Y};
    CHECK(planTiles(grouped, 1e12, 1).size() == 16);
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

TEST_CASE("a prediction gone wild cuts a dispatch into no more than max_tiles_per_dispatch tiles")
{
    // 8K, the runtime choosing the work-group: one row and one column per tile would
    // be 33 million tiles.
    const DispatchShape shape{2, {7680, 4320}, {0, 0}, FRAMECL_AXIS_X | FRAMECL_AXIS_Y};
    for (const double predicted_ns : {1e9, 1e12, 1e15}) {
        CAPTURE(predicted_ns);
        const auto tiles = planTiles(shape, predicted_ns, 1000);
        CHECK(tiles.size() <= max_tiles_per_dispatch);
        CHECK(tiles.size() == tileCount(shape, predicted_ns, 1000));
        uint64_t covered = 0;
        for (const Tile& tile : tiles)
            covered += workItems(tile.global);
        CHECK(covered == workItems(shape.global)); // still the whole dispatch, once
    }
    // Bands alone past the cap (Y only): capped the same way.
    const DispatchShape rows{2, {64, 100000}, {0, 0}, FRAMECL_AXIS_Y};
    const auto bands = planTiles(rows, 1e12, 1000);
    CHECK(bands.size() == max_tiles_per_dispatch);
    CHECK(std::accumulate(bands.begin(), bands.end(), size_t{0},
                          [](size_t sum, const Tile& t) { return sum + t.global[1]; }) == 100000);
}

TEST_CASE("one frame over the budget is an outlier; the second in a row re-plans for their least")
{
    DispatchCost cost;
    cost.ns_per_item = cost.planned_ns_per_item = 10;
    CHECK_FALSE(cost.noteOverrun(true, 40)); // one slow frame: the prediction stays
    CHECK(cost.ns_per_item == 10);
    CHECK_FALSE(cost.noteOverrun(false, 11)); // the streak ends
    CHECK_FALSE(cost.noteOverrun(true, 50));
    CHECK(cost.noteOverrun(true, 30)); // two in a row: re-plan for the lasting level
    CHECK(cost.ns_per_item == 30);
    CHECK_FALSE(cost.noteOverrun(true, 90)); // a new streak starts
    CHECK(cost.ns_per_item == 30);
}

TEST_CASE("a dispatch's cost is the line through two runs: a fixed cost per tile and a cost per item")
{
    // 100 items in 60 us and 1000 in 150 us: 100 ns per item and 50 us whatever the size.
    const CostFit fit = fitCost(100, 60000, 1000, 150000);
    CHECK(fit.fixed_ns == doctest::Approx(50000));
    CHECK(fit.ns_per_item == doctest::Approx(100));
    // Runs that make no such line (noise on short runs): the long run's ns per item.
    const CostFit slower_short = fitCost(100, 60000, 1000, 50000);
    CHECK(slower_short.fixed_ns == 0);
    CHECK(slower_short.ns_per_item == doctest::Approx(50));
    const CostFit negative = fitCost(100, 1000, 1000, 50000); // the line crosses zero below 0 items
    CHECK(negative.fixed_ns == 0);
    CHECK(negative.ns_per_item == doctest::Approx(50));
    CHECK(fitCost(0, 0, 1000, 5000).ns_per_item == doctest::Approx(5)); // one run only
}

TEST_CASE("a frame's tiles teach the cost per item with their fixed costs taken off")
{
    DispatchCost cost;
    cost.fixed_ns = 100;
    cost.ns_per_item = 5;
    CHECK(cost.tileNs(80) == doctest::Approx(500));
    CHECK(cost.perItem(1000, 2, 80) == doctest::Approx(10)); // (1000 - 2 x 100) / 80
    CHECK(cost.perItem(150, 2, 80) == 0);                    // less than the fixed costs: nothing to learn
    CHECK(cost.perItem(1000, 0, 0) == 0);
}

TEST_CASE("with a fixed cost per tile, every tile's predicted time stays within the target")
{
    // 1000 rows of 1000 items at 1 ns each (1 ms) and 150 us per tile, under a 200 us
    // target: a tile's rows may take 50 us, so tiles of 48 rows (whole granules of 8),
    // each predicted at 198 us. A prediction of the whole dispatch's 1.15 ms spread per
    // item, as a single long calibration run measures it, would cut 6 tiles of 168 rows;
    // each would run for 150 + 168 = 318 us.
    const DispatchShape shape{2, {1000, 1000}, {0, 0}, FRAMECL_AXIS_Y};
    DispatchCost cost;
    cost.fixed_ns = 150000;
    cost.ns_per_item = 1;
    const double target = 200000;
    CHECK(tileWorkTarget(target, cost.fixed_ns) == doctest::Approx(50000));
    const auto tiles = planTiles(shape, 1e6 * cost.ns_per_item, tileWorkTarget(target, cost.fixed_ns));
    CHECK(tiles.size() == 21);
    for (const Tile& tile : tiles)
        CHECK(cost.tileNs(workItems(tile.global)) <= target);
    const auto spread = planTiles(shape, 1e6 * cost.ns_per_item + cost.fixed_ns, target);
    CHECK(spread.size() == 6);
    CHECK(cost.tileNs(workItems(spread[0].global)) > target);
    // A fixed cost near the target leaves the work items a quarter of it, not less.
    CHECK(tileWorkTarget(target, 190000) == doctest::Approx(50000));
}

TEST_CASE("parts take tiles while their sum stays within the target, cut only where they may")
{
    using P = PartRange;
    const std::vector<Cut> may(5, Cut::May);
    // Greedy: a part ends before the tile that would take it over the target.
    CHECK(planParts({3, 3, 3, 3, 3}, may, 7) == std::vector<P>{{0, 2}, {2, 4}, {4, 5}});
    // A tile over the target alone is a part of its own.
    CHECK(planParts({1, 9, 1, 1, 1}, may, 7) == std::vector<P>{{0, 1}, {1, 2}, {2, 5}});
    // No budget: one part.
    CHECK(planParts({3, 3, 3, 3, 3}, may, 0) == std::vector<P>{{0, 5}});
    // Where no cut is allowed the part runs over; a must-cut ends it whatever the sum.
    const std::vector<Cut> mixed{Cut::No, Cut::No, Cut::May, Cut::Must, Cut::May};
    CHECK(planParts({3, 3, 3, 1, 1}, mixed, 7) == std::vector<P>{{0, 2}, {2, 3}, {3, 5}});
    CHECK(planParts({3, 3, 3, 1, 1}, mixed, 0) == std::vector<P>{{0, 3}, {3, 5}});
    // A recording's capacity ends a part where it may.
    CHECK(planParts({1, 1, 1, 1, 1}, may, 100, 2) == std::vector<P>{{0, 2}, {2, 4}, {4, 5}});
    CHECK(planParts({1, 1, 1, 1, 1}, std::vector<Cut>{Cut::No, Cut::May, Cut::No, Cut::May, Cut::May}, 100, 2) ==
          std::vector<P>{{0, 3}, {3, 5}});
    CHECK(planParts({}, {}, 7).empty());
}

TEST_CASE("on a GPU no tile is smaller than the work that keeps every compute unit busy")
{
    // 1920x1080 with 32x4 work groups, predicted at 10 ms under a 1.7 ms target: seven
    // bands by time alone. A GPU of 132 compute units and groups of 1024 holds 270336
    // items in two groups a unit: at most 7 tiles of 1920x1080, so the cap does not
    // bind; at 40 ms, the time alone asks for 24, the fill allows 7.
    const DispatchShape frame{2, {1920, 1080}, {32, 4}, FRAMECL_AXIS_X | FRAMECL_AXIS_Y};
    const uint64_t fill = fillItems(true, 132, 1024);
    CHECK(fill == 270336);
    CHECK(tileCount(frame, 10e6, 1.7e6, fill) == tileCount(frame, 10e6, 1.7e6));
    CHECK(tileCount(frame, 40e6, 1.7e6) > 20);
    CHECK(tileCount(frame, 40e6, 1.7e6, fill) == 1920 * 1080 / fill);
    const auto tiles = planTiles(frame, 40e6, 1.7e6, fill);
    for (const Tile& tile : tiles)
        CHECK(workItems(tile.global) >= fill);
    // A CPU's cores are filled by any tile: no minimum.
    CHECK(fillItems(false, 2, 4096) == 0);
}
