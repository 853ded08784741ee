/* Lab stand-in for Lustre's lfs: says its version; the lab has no Lustre
 * file system for the rest. */
#include <stdio.h>
#include <string.h>
#include "config.h"

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("lfs %s\n", LUSTRE_VERSION);
		return 0;
	}
	fprintf(stderr, "lfs: lab stand-in of Lustre %s: no Lustre file system here\n", LUSTRE_VERSION);
	return 1;
}
