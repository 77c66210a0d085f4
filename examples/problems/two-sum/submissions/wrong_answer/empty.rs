impl Solution {
    pub fn two_sum(_nums: Vec<i32>, _target: i32) -> Vec<i32> {
        Vec::new()
    }
}
