import java.io.*;
import java.util.*;

// The public class is not called Main: the judge finds it in the source.
public class Summer {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        int n = Integer.parseInt(in.readLine().trim());
        long total = 0;
        for (int i = 0; i < n; i++) total += Long.parseLong(in.readLine().trim());
        System.out.println(total);
    }
}
