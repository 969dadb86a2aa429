#!/usr/bin/env bash
# Unpack the prebuilt build and the base codec bench (compressed to fit the 64 MiB transfer), then run c3.
tar xJf xr13/c4/pack.tar.xz && bash xr13/c3/call.sh
