impl Solution {
    pub fn two_sum(nums: Vec<i32>, target: i32) -> Vec<i32> {
        let i = nums.iter().position(|&x| x == target).unwrap();
        vec![i as i32, i as i32]
    }
}
