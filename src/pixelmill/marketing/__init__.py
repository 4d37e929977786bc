"""Marketing generation: voice-over scripts and talking product videos (jobs and surfaces)."""
