// A bot for the arena's text protocol on stdin/stdout (docs/PROTOCOL.md, "Bots over stdin/stdout"):
// plain Java, no libraries. Plays the first legal move; your search goes in choose(). It also
// answers the `legal` request (a course's move-generation check) from legalMoves(): write your
// game's there. build.sh runs it with `--arena-options=position,legal,ready`: every `turn` line then
// carries the position (docs/games.md, "Position word"), `legal` requests reach the bot, and the
// arena starts no clock before the bot prints `ready` (so the JVM's start-up and warm-up are free).
// Debug output goes to System.err; so does anything else printed with System.out: main() keeps the
// real stdout for the protocol.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class Bot {
    static String game = "";
    static int seat;
    static final Map<String, String> params = new HashMap<>();
    static PrintStream protocol;  // the real stdout: protocol lines only

    static void send(String line) {
        protocol.print(line + "\n");
        protocol.flush();
    }

    /** The position word as a map of strings: "seat=0;ply=2;board=X...,X...,.OO." ->
     *  {seat=0, ply=2, board=X...,X...,.OO.} (docs/games.md, "Position word"). */
    static Map<String, String> readPosition(String word) {
        Map<String, String> fields = new HashMap<>();
        for (String field : word.split(";", -1)) {  // -1: Java's split drops trailing empty strings
            String[] pair = field.split("=", 2);
            fields.put(pair[0], pair.length > 1 ? pair[1] : "");
        }
        return fields;
    }

    /**
     * YOUR move generator: the legal moves of `position` (readPosition's map).
     * The sample below covers Domineering ONLY, so that the kit runs as shipped; it is not yours.
     * Write your own game's generator here (a course's move-generation phase checks it against the
     * rules). For any other game it throws, and the kit answers `legal_error`.
     */
    static List<String> legalMoves(Map<String, String> position) {
        if (!game.equals("domineering")) {
            throw new IllegalStateException("this bot has no move generator for " + game);
        }
        String[] board = position.get("board").split(",", -1);  // board[0] is row 1, the BOTTOM row
        boolean vertical = position.get("seat").equals("0") == params.getOrDefault("first", "vertical").equals("vertical");
        int rows = board.length;
        List<String> moves = new ArrayList<>();
        for (int r = 0; r < rows; r++) {
            int cols = board[r].length();
            for (int c = 0; c < cols; c++) {
                if (board[r].charAt(c) != '.') continue;
                boolean room = vertical ? r + 1 < rows && board[r + 1].charAt(c) == '.'  // vertical: named by its LOWER cell
                                        : c + 1 < cols && board[r].charAt(c + 1) == '.';
                if (room) moves.add((r + 1) + String.valueOf((char) ('A' + c)));
            }
        }
        return moves;
    }

    /**
     * Your search goes here: you are `seat` (0 moves first) in `game` with `params`; `position` is the
     * current position (readPosition's map; null without the `position` option), `moves` every move
     * so far, `legal` the legal moves (never empty). Answer within timeLeftS seconds.
     */
    static String choose(Map<String, String> position, List<String> moves, List<String> legal, double timeLeftS) {
        return legal.get(0);
    }

    /** Runs the code of a turn a few times before `ready`, so the JIT has compiled it. */
    static void warmUp() {
        String saved = game;
        game = "domineering";
        Map<String, String> empty = readPosition("seat=0;ply=0;board=........,........,........,........,"
                                                 + "........,........,........,........");
        for (int i = 0; i < 2000; i++) {
            choose(empty, new ArrayList<>(), legalMoves(empty), 1.0);
        }
        game = saved;
    }

    public static void main(String[] args) throws Exception {
        protocol = new PrintStream(System.out, false, "UTF-8");
        System.setOut(System.err);  // a stray System.out.println goes to the log, not to the arena
        warmUp();
        send("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split(" +");
            switch (words[0]) {
                case "new_game":  // new_game GAME SEAT CLOCK SEED KEY=VALUE...
                    game = words[1];
                    seat = Integer.parseInt(words[2]);
                    params.clear();
                    for (int i = 5; i < words.length; i++) {
                        String[] pair = words[i].split("=", 2);
                        params.put(pair[0], pair.length > 1 ? pair[1] : "");
                    }
                    break;
                case "turn": {  // turn PLY TIME_LEFT_S [position POSITION] moves MOVE... legal MOVE...
                    double timeLeftS = Double.parseDouble(words[2]);
                    Map<String, String> position = words[3].equals("position") ? readPosition(words[4]) : null;
                    List<String> all = Arrays.asList(words);
                    int start = all.indexOf("moves") + 1, split = all.indexOf("legal");
                    List<String> moves = all.subList(start, split), legal = all.subList(split + 1, words.length);
                    send("move " + choose(position, moves, legal, timeLeftS) + " comment first legal move");
                    break;
                }
                case "legal":  // legal POSITION: the moves of your own generator
                    try {
                        send(("legal_moves " + String.join(" ", legalMoves(readPosition(words[1])))).trim());
                    } catch (RuntimeException error) {
                        send("legal_error " + error.getMessage());
                    }
                    break;
                case "bye":
                    return;
                default:  // game_over WINNER REASON...: nothing to do here
                    break;
            }
        }
    }
}
