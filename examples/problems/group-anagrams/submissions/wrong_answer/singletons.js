var groupAnagrams = function(strs) {
    return strs.map((s) => [s]);
};
