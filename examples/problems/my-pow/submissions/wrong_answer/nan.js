var myPow = function(x, n) {
    return n < 0 ? NaN : Math.pow(x, n);
};
