// A bot for the arena's text protocol on stdin/stdout (docs/PROTOCOL.md, "Bots over stdin/stdout").
// Plays the first legal move; your search goes in Choose(). Debug output goes to stderr
// (Console.Error): anything else printed on stdout is a forfeit.
using System;
using System.Collections.Generic;

public static class Bot
{
    static string game = "";
    static int seat;
    static readonly Dictionary<string, string> parameters = new Dictionary<string, string>();

    // Your search goes here: replay `moves` from the initial position of `game` (with `parameters`;
    // you are `seat`, 0 moves first),
    // search within `timeLeftS` seconds, return one of `legal` (never empty).
    static string Choose(string game, int seat, List<string> moves, List<string> legal, double timeLeftS)
    {
        return legal[0];
    }

    public static void Main()
    {
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
                case "turn":  // turn PLY TIME_LEFT_S moves MOVE... legal MOVE...
                    double timeLeftS = double.Parse(words[2], System.Globalization.CultureInfo.InvariantCulture);
                    int split = Array.IndexOf(words, "legal");
                    var moves = new List<string>(new ArraySegment<string>(words, 4, split - 4));
                    var legal = new List<string>(new ArraySegment<string>(words, split + 1, words.Length - split - 1));
                    Console.Out.WriteLine("move " + Choose(game, seat, moves, legal, timeLeftS) + " comment first legal move");
                    Console.Out.Flush();
                    break;
                case "bye":
                    return;
                // game_over WINNER REASON...: nothing to do here
            }
        }
    }
}
