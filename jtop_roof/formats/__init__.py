"""What comes in and goes out as text: the tegrastats grammar, fast JSON, the reader of logs and
recordings, the recorder, trtexec and Nsight Compute output, and safe reading of user files."""
