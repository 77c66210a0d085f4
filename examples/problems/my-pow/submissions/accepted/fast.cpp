class Solution {
public:
    double myPow(double x, int n) {
        long long e = n;
        if (e < 0) { x = 1 / x; e = -e; }
        double result = 1;
        for (; e > 0; e >>= 1, x *= x)
            if (e & 1) result *= x;
        return result;
    }
};
