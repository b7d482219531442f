// A bot for the arena's text protocol on stdin/stdout (docs/PROTOCOL.md, "Bots over stdin/stdout").
// Plays the first legal move; your search goes in Choose(). It also answers the `legal` request (a
// course's move-generation check) from LegalMoves(): write your game's there. build.sh runs it with
// `--arena-options=position,legal`: every `turn` line then carries the position (docs/games.md,
// "Position word") and `legal` requests reach the bot. Debug output goes to stderr (Console.Error);
// so does anything else written with Console.Out: Main() keeps the real stdout for the protocol.
using System;
using System.Collections.Generic;
using System.IO;

public static class Bot
{
    static string game = "";
    static int seat;
    static readonly Dictionary<string, string> parameters = new Dictionary<string, string>();
    static TextWriter protocol;  // the real stdout: protocol lines only

    static void Send(string line)
    {
        protocol.Write(line + "\n");
        protocol.Flush();
    }

    // The position word as a dictionary of strings: "seat=0;ply=2;board=X...,X...,.OO." ->
    // {seat: "0", ply: "2", board: "X...,X...,.OO."} (docs/games.md, "Position word").
    static Dictionary<string, string> ReadPosition(string word)
    {
        var fields = new Dictionary<string, string>();
        foreach (string field in word.Split(';'))
        {
            string[] pair = field.Split(new[] { '=' }, 2);
            fields[pair[0]] = pair.Length > 1 ? pair[1] : "";
        }
        return fields;
    }

    // YOUR move generator: the legal moves of `position` (ReadPosition's dictionary).
    // The sample below covers Domineering ONLY, so that the kit runs as shipped; it is not yours.
    // Write your own game's generator here (a course's move-generation phase checks it against the
    // rules). For any other game it throws, and the kit answers `legal_error`.
    static List<string> LegalMoves(Dictionary<string, string> position)
    {
        if (game != "domineering") throw new InvalidOperationException("this bot has no move generator for " + game);
        string[] board = position["board"].Split(',');  // board[0] is row 1, the BOTTOM row
        string first;
        if (!parameters.TryGetValue("first", out first)) first = "vertical";
        bool vertical = (position["seat"] == "0") == (first == "vertical");
        int rows = board.Length;
        var moves = new List<string>();
        for (int r = 0; r < rows; r++)
        {
            int cols = board[r].Length;
            for (int c = 0; c < cols; c++)
            {
                if (board[r][c] != '.') continue;
                bool room = vertical ? r + 1 < rows && board[r + 1][c] == '.'  // vertical: named by its LOWER cell
                                     : c + 1 < cols && board[r][c + 1] == '.';
                if (room) moves.Add((r + 1).ToString() + (char)('A' + c));
            }
        }
        return moves;
    }

    // Your search goes here: you are `seat` (0 moves first) in `game` with `parameters`; `position`
    // is the current position (ReadPosition's dictionary; null without the `position` option),
    // `moves` every move so far, `legal` the legal moves (never empty); answer within `timeLeftS`.
    static string Choose(int seat, Dictionary<string, string> position, List<string> moves, List<string> legal,
                         double timeLeftS)
    {
        return legal[0];
    }

    public static void Main()
    {
        protocol = Console.Out;
        Console.SetOut(Console.Error);  // a stray Console.WriteLine goes to the log, not to the arena
        string line;
        while ((line = Console.In.ReadLine()) != null)
        {
            string[] words = line.Split(new[] { ' ' }, StringSplitOptions.RemoveEmptyEntries);
            if (words.Length == 0) continue;
            switch (words[0])
            {
                case "new_game":  // new_game GAME SEAT CLOCK SEED KEY=VALUE...
                    game = words[1];
                    seat = int.Parse(words[2]);
                    parameters.Clear();
                    for (int i = 5; i < words.Length; i++)
                    {
                        string[] pair = words[i].Split(new[] { '=' }, 2);
                        parameters[pair[0]] = pair.Length > 1 ? pair[1] : "";
                    }
                    break;
                case "turn":  // turn PLY TIME_LEFT_S [position POSITION] moves MOVE... legal MOVE...
                    double timeLeftS = double.Parse(words[2], System.Globalization.CultureInfo.InvariantCulture);
                    var position = words[3] == "position" ? ReadPosition(words[4]) : null;
                    int start = Array.IndexOf(words, "moves") + 1;
                    int split = Array.IndexOf(words, "legal");
                    var moves = new List<string>(new ArraySegment<string>(words, start, split - start));
                    var legal = new List<string>(new ArraySegment<string>(words, split + 1, words.Length - split - 1));
                    Send("move " + Choose(seat, position, moves, legal, timeLeftS) + " comment first legal move");
                    break;
                case "legal":  // legal POSITION: the moves of your own generator
                    try
                    {
                        Send(("legal_moves " + string.Join(" ", LegalMoves(ReadPosition(words[1])))).TrimEnd());
                    }
                    catch (Exception error)
                    {
                        Send("legal_error " + error.Message);
                    }
                    break;
                case "bye":
                    return;
                // game_over WINNER REASON...: nothing to do here
            }
        }
    }
}
