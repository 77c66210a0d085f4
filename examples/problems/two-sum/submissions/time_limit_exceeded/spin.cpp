class Solution {
public:
    vector<int> twoSum(vector<int>& nums, int target) {
        volatile unsigned long long n = 0;
        while (true) ++n;
    }
};
