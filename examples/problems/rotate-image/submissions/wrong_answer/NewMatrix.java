class Solution {
    public void rotate(int[][] matrix) {
        // Rotates a copy: the given matrix is left as it was.
        int n = matrix.length;
        int[][] rotated = new int[n][n];
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) rotated[j][n - 1 - i] = matrix[i][j];
        matrix = rotated;
    }
}
