# A directory program: __main__.py is the entry point, helper.py a module beside it.
import sys
from helper import total
print(total(sys.stdin.read().split()[1:]))
