// A Domineering bot in Java for the text protocol's extensions (tests/test_stdio_extensions.py).
//     javac ExtBot.java;  java ExtBot [--warm SECONDS] [--ready] [--fd3]
// It sleeps SECONDS first (a slow warm-up, on top of the JVM's start-up), then prints `ready` with
// --ready. It reads only the `position` word of each `turn` (never the move list) and plays the
// LAST move of its own generator. It prints junk with System.out; with --fd3 its protocol lines go
// to file descriptor 3 (opened as /dev/fd/3), so System.out may print what it likes.
import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class ExtBot {
    public static void main(String[] args) throws Exception {
        List<String> options = Arrays.asList(args);
        PrintStream out = options.contains("--fd3") ? new PrintStream(new FileOutputStream("/dev/fd/3"), true, "UTF-8")
                                                    : System.out;
        int warm = options.indexOf("--warm");
        if (warm >= 0) Thread.sleep((long) (1000 * Double.parseDouble(args[warm + 1])));
        System.out.println("engine 3.0 (Java) warmed up");
        if (options.contains("--ready")) out.println("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        String line, first = "vertical";
        while ((line = in.readLine()) != null) {
            System.out.println("junk: read " + line.length() + " chars");
            String[] words = line.split(" ");
            if (words[0].equals("bye")) break;
            if (words[0].equals("new_game")) {
                for (String word : words) if (word.startsWith("first=")) first = word.substring(6);
                continue;
            }
            if (!words[0].equals("turn")) continue;
            if (!words[3].equals("position")) throw new IllegalStateException("no position word");
            Map<String, String> fields = new HashMap<>();
            for (String field : words[4].split(";", -1)) {
                String[] pair = field.split("=", 2);
                fields.put(pair[0], pair[1]);
            }
            String[] board = fields.get("board").split(",", -1);  // board[0] is row 1, the bottom row
            boolean vertical = fields.get("seat").equals("0") == first.equals("vertical");
            String last = null;
            for (int r = 0; r < board.length; r++) {
                for (int c = 0; c < board[r].length(); c++) {
                    if (board[r].charAt(c) != '.') continue;
                    boolean room = vertical ? r + 1 < board.length && board[r + 1].charAt(c) == '.'
                                            : c + 1 < board[r].length() && board[r].charAt(c + 1) == '.';
                    if (room) last = (r + 1) + String.valueOf((char) ('A' + c));
                }
            }
            out.println("move " + last + " comment from the position");
        }
    }
}
