"""What is kept on disk: session transcripts and their records, checkpoints, worktrees, full tool outputs."""
