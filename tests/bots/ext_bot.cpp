// A Domineering bot in C++ for the text protocol's extensions (tests/test_stdio_extensions.py).
//     g++ -O2 -o ext_bot ext_bot.cpp;  ext_bot [--fd3]
// It reads only the `position` word of each `turn` (never the move list), generates the moves of
// that position itself and plays the LAST of them. It prints junk on stdout (printf, as a chatty
// engine does); with --fd3 its protocol lines go to file descriptor 3 instead of stdout.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

static std::vector<std::string> split(const std::string& text, char sep) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, sep)) parts.push_back(part);
    return parts;
}

int main(int argc, char** argv) {
    const bool fd3 = argc > 1 && std::strcmp(argv[1], "--fd3") == 0;
    FILE* out = fd3 ? fdopen(3, "w") : stdout;  // the protocol's channel
    if (out == nullptr) { std::perror("fdopen(3)"); return 3; }
    std::printf("engine 2.0 (C++) says hello on stdout\n");
    std::fflush(stdout);
    std::string line, first = "vertical";
    while (std::getline(std::cin, line)) {
        std::printf("junk: read %zu bytes\n", line.size());
        std::fflush(stdout);
        std::istringstream words(line);
        std::string kind;
        words >> kind;
        if (kind == "bye") break;
        if (kind == "new_game") {
            std::string word;
            while (words >> word) if (word.rfind("first=", 0) == 0) first = word.substr(6);
            continue;
        }
        if (kind != "turn") continue;
        std::string ply, time_left, key, position;
        words >> ply >> time_left >> key >> position;
        if (key != "position") { std::fprintf(stderr, "no position word\n"); return 4; }
        std::map<std::string, std::string> fields;
        for (const auto& field : split(position, ';')) {
            const auto eq = field.find('=');
            fields[field.substr(0, eq)] = field.substr(eq + 1);
        }
        const auto board = split(fields["board"], ',');  // board[0] is row 1, the bottom row
        const bool vertical = (fields["seat"] == "0") == (first == "vertical");
        std::string last;
        const int rows = static_cast<int>(board.size());
        for (int r = 0; r < rows; ++r) {
            const int cols = static_cast<int>(board[r].size());
            for (int c = 0; c < cols; ++c) {
                if (board[r][c] != '.') continue;
                const bool room = vertical ? r + 1 < rows && board[r + 1][c] == '.'
                                           : c + 1 < cols && board[r][c + 1] == '.';
                if (room) last = std::to_string(r + 1) + static_cast<char>('A' + c);
            }
        }
        std::fprintf(out, "move %s comment from the position\n", last.c_str());
        std::fflush(out);
    }
    return 0;
}
