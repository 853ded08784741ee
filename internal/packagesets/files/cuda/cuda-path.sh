# cuda (roles/cuda): the CUDA toolkit of this image on PATH
export PATH=$PATH:/usr/local/cuda-13.3/bin
