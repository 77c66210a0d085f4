class Solution:
    def myPow(self, x: float, n: int) -> float:
        return x ** abs(n)
