"""Scoring of exploratory analysis tasks with milestones (DataClawBench style): accuracy per
answer part, milestones from the trajectory (code-found excerpts, a judge, a code rule), and the
process metrics GPR, TPE and EE."""
