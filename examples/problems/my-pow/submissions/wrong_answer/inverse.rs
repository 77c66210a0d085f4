impl Solution {
    pub fn my_pow(x: f64, n: i32) -> f64 {
        1.0 / x.powi(n)
    }
}
