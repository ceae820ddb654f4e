#include "text_table.hpp"

#include <algorithm>

namespace framecl::cli {
namespace {

// Columns are measured in code points, not bytes: client names and units may hold
// UTF-8 ("µs").
size_t displayWidth(const std::string& text)
{
    return size_t(std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

} // namespace

std::string TextTable::render(size_t indent) const
{
    std::vector<size_t> widths;
    for (const Column& column : columns_)
        widths.push_back(displayWidth(column.heading));
    for (const auto& row : rows_)
        for (size_t c = 0; c < row.size() && c < widths.size(); ++c)
            widths[c] = std::max(widths[c], displayWidth(row[c]));

    std::string text;
    const auto line = [&](auto cell) {
        std::string out(indent, ' ');
        for (size_t c = 0; c < columns_.size(); ++c) {
            const std::string value = cell(c);
            const std::string padding(widths[c] - displayWidth(value), ' ');
            const bool last = c + 1 == columns_.size();
            if (columns_[c].align == Align::Right)
                out += padding + value;
            else
                out += last ? value : value + padding; // no trailing blanks
            if (!last)
                out += "  ";
        }
        text += out + "\n";
    };
    line([&](size_t c) { return columns_[c].heading; });
    for (const auto& row : rows_)
        line([&](size_t c) { return c < row.size() ? row[c] : std::string(); });
    return text;
}

} // namespace framecl::cli
