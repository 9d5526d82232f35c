import sys

sys.stdin.read()  # "pile N": the referee's render
print(1)
