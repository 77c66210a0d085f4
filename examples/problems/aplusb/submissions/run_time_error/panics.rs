fn main() {
    let v: Vec<i64> = Vec::new();
    println!("{}", v[3]);
}
