"""The questions both front ends ask, each answered in one place.

"Which machine is this and what does it run on", "what model did the user choose", "what
benchmark do these choices mean", "which device was this run measured on", "what would each
device do for this model and workload", "is this upgrade worth it". The command line and the
app call these functions and only render what they return, so the two never drift apart.
"""
