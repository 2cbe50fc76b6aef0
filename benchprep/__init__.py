"""Bench preparation: labelled benches in the format the toolkit reads.

Reading the SWE-Explore release and joining it with the issue sources (SWE-bench Verified / Multilingual /
Pro), materialising snapshots from bare git mirrors, and mining labelled records from git history (commit
message -> the old side of its diff as gold regions).
"""
