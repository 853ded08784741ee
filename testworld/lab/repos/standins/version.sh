#!/bin/sh
# Lab stand-in for @PROG@ from @PKG@-@EVR@.
echo "@PROG@ version @VERSION@ (lab stand-in, @PKG@-@EVR@)"
