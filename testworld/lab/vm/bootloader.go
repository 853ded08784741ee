package vm

import _ "embed" // the stand-ins are files, checked by shellcheck

// The boot loader configuration a Rocky 9 GenericCloud image carries (BLS
// entries, /etc/default/grub, /boot/grub2/grub.cfg) and stand-ins for
// grubby and grub2-mkconfig, which Debian does not ship (the lab VMs
// never boot a kernel of their own). They edit the same files the real
// tools edit, so kernel arguments set in a build can be checked in the
// image; nothing reads them at boot.

const bootKernel = "5.14.0-570.17.1.el9_6.x86_64"

func bootloaderFiles() []imageFile {
	return []imageFile{
		{"boot/loader/entries/fatlab-" + bootKernel + ".conf", 0o644, "title Rocky Linux (" + bootKernel + ") 9.6 (Blue Onyx)\n" +
			"version " + bootKernel + "\nlinux /vmlinuz-" + bootKernel + "\ninitrd /initramfs-" + bootKernel + ".img $tuned_initrd\n" +
			"options root=LABEL=rocky ro console=ttyS0,115200n8 no_timer_check crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M\n" +
			"grub_users $grub_users\ngrub_arg --unrestricted\ngrub_class rocky\n"},
		{"etc/default/grub", 0o644, "GRUB_TIMEOUT=1\nGRUB_DISTRIBUTOR=\"$(sed 's, release .*$,,g' /etc/system-release)\"\nGRUB_DEFAULT=saved\n" +
			"GRUB_DISABLE_SUBMENU=true\nGRUB_TERMINAL_OUTPUT=\"console\"\n" +
			"GRUB_CMDLINE_LINUX=\"console=ttyS0,115200n8 no_timer_check crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M\"\n" +
			"GRUB_DISABLE_RECOVERY=\"true\"\nGRUB_ENABLE_BLSCFG=true\n"},
		{"boot/grub2/grub.cfg", 0o644, "# fatlab: written by the image build; regenerate with grub2-mkconfig\n"},
		{"usr/sbin/grubby", 0o755, grubbyScript},
		{"usr/sbin/grub2-mkconfig", 0o755, grub2MkconfigScript},
	}
}

// grubbyScript handles what builds use: --info=ALL|DEFAULT,
// --update-kernel=ALL|DEFAULT with --args and/or --remove-args, and
// --default-kernel, over the BLS entries' options lines.
//
//go:embed guest/grubby.sh
var grubbyScript string

// grub2MkconfigScript writes the grub.cfg of a BLS system: the kernel
// command line of /etc/default/grub and a blscfg call.
//
//go:embed guest/grub2-mkconfig.sh
var grub2MkconfigScript string
