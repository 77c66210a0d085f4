impl Solution {
    pub fn rotate(matrix: &mut Vec<Vec<i32>>) {
        for row in matrix.iter_mut() {
            row.reverse();
        }
    }
}
