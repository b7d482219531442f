// A bot for the arena, protocol v1 (docs/PROTOCOL.md): ZeroMQ (cppzmq) + msgpack-c.
// Plays the first legal move; your search goes in choose(). It also answers the referee's optional
// `legal` request (docs/PROTOCOL.md, "Move generation") from its own move generator, legal_moves()
// (Domineering's here; write your game's); run with --no-legal it does not (it ignores the request).
#ifndef MSGPACK_NO_BOOST
#define MSGPACK_NO_BOOST  // msgpack-c would otherwise need Boost headers
#endif
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <msgpack.hpp>
#include <zmq.hpp>

using Message = std::map<std::string, msgpack::object>;

struct Game {
    std::string name;                            // "domineering", "morris", "santorini", ...
    std::map<std::string, msgpack::object> params;  // the game's parameters (rows, cols, ...)
    int seat = 0;                                // 0 moves first
};

// Your search goes here: `state` is the position (docs/games.md, the game's wire format),
// `moves` every move so far, `legal` the legal moves (never empty). Answer within time_left_s.
static std::string choose(const Game& game, const msgpack::object& state, const std::vector<std::string>& moves,
                          const std::vector<std::string>& legal, double time_left_s) {
    (void)game; (void)state; (void)moves; (void)time_left_s;
    return legal.front();
}

// YOUR move generator: the legal moves of `position` (the game's wire format, docs/games.md), in
// the game's canonical notation. The sample below covers Domineering ONLY, so that the kit runs as
// shipped; it is not yours. Write your own game's generator here (a course's move-generation phase
// checks it against the rules). For any other game it throws, and the bot answers the `legal`
// request with an error; it throws std::runtime_error for a position it cannot read, too.
static std::vector<std::string> legal_moves(const msgpack::object& position) {
    std::map<std::string, msgpack::object> wire;
    position.convert(wire);
    const std::string game = wire.at("game").as<std::string>();
    if (game != "domineering") throw std::runtime_error("this bot has no move generator for " + game);
    std::map<std::string, msgpack::object> params;
    wire.at("params").convert(params);
    const auto board = wire.at("board").as<std::vector<std::string>>();  // board[0] is row 1
    const int seat = wire.at("seat").as<int>();
    const bool vertical = (seat == 0) == (params.at("first").as<std::string>() == "vertical");
    const int rows = static_cast<int>(board.size());
    std::vector<std::string> moves;
    for (int r = 0; r < rows; ++r) {
        const int cols = static_cast<int>(board[r].size());
        for (int c = 0; c < cols; ++c) {
            if (board[r][c] != '.') continue;
            const bool room = vertical ? r + 1 < rows && board[r + 1][c] == '.'
                                       : c + 1 < cols && board[r][c + 1] == '.';
            if (room) moves.push_back(std::to_string(r + 1) + static_cast<char>('A' + c));
        }
    }
    return moves;
}

static void send(zmq::socket_t& socket, const msgpack::sbuffer& buffer) {
    socket.send(zmq::buffer(buffer.data(), buffer.size()), zmq::send_flags::none);
}

int main(int argc, char** argv) {
    bool answer_legal = true;  // --no-legal: a bot without the move-generation extension
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--no-legal") == 0) answer_legal = false;
    }
    const char* endpoint = std::getenv("ARENA_ENDPOINT");
    const char* token = std::getenv("ARENA_TOKEN");
    if (!endpoint || !token) {
        std::cerr << "ARENA_ENDPOINT and ARENA_TOKEN are not set: the arena starts this bot\n";
        return 2;
    }
    zmq::context_t context;
    zmq::socket_t socket(context, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::linger, 0);
    socket.connect(endpoint);

    msgpack::sbuffer hello;
    msgpack::packer<msgpack::sbuffer> packer(hello);
    packer.pack_map(4);
    packer.pack("type"); packer.pack("hello");
    packer.pack("token"); packer.pack(std::string(token));
    packer.pack("name"); packer.pack("cpp-kit");
    packer.pack("protocol"); packer.pack(1);
    send(socket, hello);

    Game game;
    msgpack::object_handle game_handle;  // keeps game.params alive
    for (;;) {
        zmq::message_t frame;
        if (!socket.recv(frame)) continue;
        msgpack::object_handle handle = msgpack::unpack(static_cast<const char*>(frame.data()), frame.size());
        Message message;
        handle.get().convert(message);
        const std::string type = message["type"].as<std::string>();
        if (type == "bye") break;
        if (type == "new_game") {
            game.name = message["game"].as<std::string>();
            game.seat = message["seat"].as<int>();
            message["params"].convert(game.params);
            game_handle = std::move(handle);
            continue;
        }
        if (type == "legal") {
            if (!answer_legal) continue;
            msgpack::sbuffer out;
            msgpack::packer<msgpack::sbuffer> reply(out);
            reply.pack_map(3);
            reply.pack("type"); reply.pack("legal_moves");
            reply.pack("request"); reply.pack(message["request"].as<long>());
            try {
                const std::vector<std::string> moves = legal_moves(message["position"]);
                reply.pack("moves"); reply.pack(moves);
            } catch (const std::exception& error) {
                reply.pack("error"); reply.pack(std::string(error.what()));
            }
            send(socket, out);
            continue;
        }
        if (type != "turn") continue;  // game_over: nothing to do here
        const std::string game_id = message["game_id"].as<std::string>();
        const long ply = message["ply"].as<long>();
        const auto moves = message["moves"].as<std::vector<std::string>>();
        const auto legal = message["legal"].as<std::vector<std::string>>();
        const double time_left_s = message["time_left_s"].as<double>();
        const std::string move = choose(game, message["state"], moves, legal, time_left_s);

        msgpack::sbuffer out;
        msgpack::packer<msgpack::sbuffer> reply(out);
        reply.pack_map(5);
        reply.pack("type"); reply.pack("move");
        reply.pack("game_id"); reply.pack(game_id);
        reply.pack("ply"); reply.pack(ply);
        reply.pack("move"); reply.pack(move);
        reply.pack("info"); reply.pack_map(1);
        reply.pack("comment"); reply.pack("first legal move");
        send(socket, out);
    }
    return 0;
}
