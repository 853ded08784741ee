#!/bin/sh
echo compute-init
