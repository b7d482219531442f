// A bot for the arena, protocol v1 (docs/PROTOCOL.md): JeroMQ + msgpack-core.
// Plays the first legal move; your search goes in choose(). It also answers the referee's optional
// `legal` request (docs/PROTOCOL.md, "Move generation") from its own move generator, legalMoves():
// write your game's there. Run with --no-legal it does not (it ignores the request).
// Works with Debian's JeroMQ 0.3.6 (no SocketType: ZMQ.DEALER) and with current Maven releases.
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;
import org.zeromq.ZMQ;

public class Bot {
    /** The game being played: set by new_game. */
    static String game = "";
    static Map<Value, Value> params;
    static int seat;

    /**
     * Your search goes here: `state` is the position (docs/games.md, the game's wire format),
     * `moves` every move so far, `legal` the legal moves (never empty). Answer within timeLeftS.
     */
    static String choose(Map<Value, Value> state, List<String> moves, List<String> legal, double timeLeftS) {
        return legal.get(0);
    }

    /**
     * YOUR move generator: the legal moves of `position` (the game's wire format, docs/games.md), in
     * the game's canonical notation. The sample below covers Domineering ONLY, so that the kit runs
     * as shipped; it is not yours. Write your own game's generator here (a course's move-generation
     * phase checks it against the rules). For any other game it throws, and the kit answers with an
     * error.
     */
    static List<String> legalMoves(Map<Value, Value> position) {
        String name = get(position, "game").asStringValue().asString();
        if (!name.equals("domineering")) {
            throw new IllegalStateException("this bot has no move generator for " + name);
        }
        Map<Value, Value> wireParams = get(position, "params").asMapValue().map();
        List<String> board = strings(get(position, "board"));  // board.get(0) is row 1, the BOTTOM row
        int toMove = get(position, "seat").asIntegerValue().toInt();
        boolean vertical = (toMove == 0) == get(wireParams, "first").asStringValue().asString().equals("vertical");
        int rows = board.size();
        List<String> moves = new ArrayList<>();
        for (int r = 0; r < rows; r++) {
            int cols = board.get(r).length();
            for (int c = 0; c < cols; c++) {
                if (board.get(r).charAt(c) != '.') continue;
                boolean room = vertical ? r + 1 < rows && board.get(r + 1).charAt(c) == '.'  // vertical: its LOWER cell
                                        : c + 1 < cols && board.get(r).charAt(c + 1) == '.';
                if (room) moves.add((r + 1) + String.valueOf((char) ('A' + c)));
            }
        }
        return moves;
    }

    static Value get(Map<Value, Value> message, String key) {
        return message.get(ValueFactory.newString(key));
    }

    static List<String> strings(Value list) {
        List<String> result = new ArrayList<>();
        for (Value item : list.asArrayValue()) {
            result.add(item.asStringValue().asString());
        }
        return result;
    }

    public static void main(String[] args) throws Exception {
        boolean answerLegal = !Arrays.asList(args).contains("--no-legal");  // a bot without the extension
        String endpoint = System.getenv("ARENA_ENDPOINT");
        String token = System.getenv("ARENA_TOKEN");
        if (endpoint == null || token == null) {
            System.err.println("ARENA_ENDPOINT and ARENA_TOKEN are not set: the arena starts this bot");
            System.exit(2);
        }
        ZMQ.Context context = ZMQ.context(1);
        ZMQ.Socket socket = context.socket(ZMQ.DEALER);
        socket.setLinger(0);
        socket.connect(endpoint);

        MessageBufferPacker hello = MessagePack.newDefaultBufferPacker();
        hello.packMapHeader(4);
        hello.packString("type").packString("hello");
        hello.packString("token").packString(token);
        hello.packString("name").packString("java-kit");
        hello.packString("protocol").packInt(1);
        socket.send(hello.toByteArray(), 0);

        while (true) {
            byte[] frame = socket.recv(0);
            Map<Value, Value> message = MessagePack.newDefaultUnpacker(frame).unpackValue().asMapValue().map();
            String type = get(message, "type").asStringValue().asString();
            if (type.equals("bye")) {
                break;
            }
            if (type.equals("new_game")) {
                game = get(message, "game").asStringValue().asString();
                params = get(message, "params").asMapValue().map();
                seat = get(message, "seat").asIntegerValue().toInt();
                continue;
            }
            if (type.equals("legal")) {
                if (!answerLegal) {
                    continue;
                }
                MessageBufferPacker out = MessagePack.newDefaultBufferPacker();
                out.packMapHeader(3);
                out.packString("type").packString("legal_moves");
                out.packString("request").packLong(get(message, "request").asIntegerValue().toLong());
                try {
                    List<String> moves = legalMoves(get(message, "position").asMapValue().map());
                    out.packString("moves").packArrayHeader(moves.size());
                    for (String move : moves) {
                        out.packString(move);
                    }
                } catch (RuntimeException error) {
                    out.packString("error").packString(String.valueOf(error.getMessage()));
                }
                socket.send(out.toByteArray(), 0);
                continue;
            }
            if (!type.equals("turn")) {
                continue;  // game_over: nothing to do here
            }
            String gameId = get(message, "game_id").asStringValue().asString();
            long ply = get(message, "ply").asIntegerValue().toLong();
            Value timeLeft = get(message, "time_left_s");  // a float, or an integer
            double timeLeftS = timeLeft.isFloatValue() ? timeLeft.asFloatValue().toDouble()
                                                       : timeLeft.asIntegerValue().toLong();
            String move = choose(get(message, "state").asMapValue().map(), strings(get(message, "moves")),
                                 strings(get(message, "legal")), timeLeftS);

            MessageBufferPacker out = MessagePack.newDefaultBufferPacker();
            out.packMapHeader(5);
            out.packString("type").packString("move");
            out.packString("game_id").packString(gameId);
            out.packString("ply").packLong(ply);
            out.packString("move").packString(move);
            out.packString("info").packMapHeader(1);
            out.packString("comment").packString("first legal move");
            socket.send(out.toByteArray(), 0);
        }
        socket.close();
        context.term();
    }
}
