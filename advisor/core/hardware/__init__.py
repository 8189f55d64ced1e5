"""Hardware facts: what this machine has, read without admin rights, never crashing or hanging."""
