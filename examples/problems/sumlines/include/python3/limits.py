# Added to every Python submission (include/python3/), with the package's constants filled in.
MAX_N = {{max_n}}
