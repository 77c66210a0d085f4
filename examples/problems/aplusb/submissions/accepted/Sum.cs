using System;

public class Sum {
    public static void Main() {
        var parts = Console.ReadLine().Split(' ', StringSplitOptions.RemoveEmptyEntries);
        Console.WriteLine(long.Parse(parts[0]) + long.Parse(parts[1]));
    }
}
