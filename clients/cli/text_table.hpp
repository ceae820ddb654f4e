#pragma once
// Columns of text for a terminal: each column as wide as its widest cell, numbers
// right-aligned so that their digits line up.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace framecl::cli {

class TextTable {
public:
    enum class Align { Left, Right };
    struct Column {
        std::string heading;
        Align align;
    };

    explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

    // One cell per column, in order; missing cells are empty.
    void addRow(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
    bool empty() const { return rows_.empty(); }

    // The heading line and the rows, each line indented by `indent` spaces.
    std::string render(size_t indent = 0) const;

private:
    std::vector<Column> columns_;
    std::vector<std::vector<std::string>> rows_;
};

} // namespace framecl::cli
