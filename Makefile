# repd: build with SwiftPM and install for any systemd distribution. Debian/Ubuntu: scripts/package builds a .deb
# from this same list (it runs `make install PREFIX=/usr DESTDIR=…`).
#
#   make                                      release build, Swift standard library linked in (no Swift runtime needed)
#   sudo make install [PREFIX=/usr/local] [DESTDIR=…]
#   sudo make uninstall [PREFIX=/usr/local] [DESTDIR=…]
#
# After `make install`: `systemd-sysusers repd.conf`, `udevadm trigger --subsystem-match=iio`,
# `systemctl daemon-reload`, `systemctl enable --now repd` (README.md, "Install as a service").

# What is installed: programs (Sources/NAME with an @main), units, udev rules, sysusers.d entries. The one place to
# add a program; units, rules and sysusers files in systemd/ are picked up by name.
# Swift 6.0 (Debian trixie's swiftlang) reads Package@swift-6.0.swift, which has no repd-web (Hummingbird needs SwiftPM
# 6.2): then neither repd-web nor its unit is built or installed (docs/PACKAGING.md, "Swift 6.0 and arm64").
SWIFT ?= swift
SWIFT_6_0 := $(shell $(SWIFT) --version 2>/dev/null | grep -q 'Swift version 6\.0' && echo yes)
PROGRAMS := repd repctl $(if $(SWIFT_6_0),,$(notdir $(wildcard Sources/repd-web)))
UNITS := $(filter-out $(patsubst %,systemd/%.service,$(filter-out $(PROGRAMS),repd-web)),\
	$(wildcard systemd/*.service systemd/*.socket))
UDEV_RULES := $(wildcard systemd/*.rules)
SYSUSERS := $(wildcard systemd/*.sysusers)
CONFIG := config/repd.toml
DOCS := README.md docs/PROTOCOL.md docs/DETECTOR.md

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SYSCONFDIR ?= /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
UDEVRULESDIR ?= $(PREFIX)/lib/udev/rules.d
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
DOCDIR ?= $(PREFIX)/share/doc/repd
MANDIR ?= $(PREFIX)/share/man
DESTDIR ?=

# The Swift standard library linked in; no $ORIGIN run path; linked by the toolchain's lld with packed relative
# relocations (DT_RELR, glibc >= 2.36) and without exporting the programs' own symbols: 3 MB smaller and about 2 MB
# less resident than the plain static build (docs/PACKAGING.md, "Footprint").
# Cross builds: SWIFT_SDK=TRIPLE (an installed Swift SDK, `swift sdk list`; docs/PACKAGING.md).
SWIFT_SDK ?=
SWIFT_BUILD_FLAGS ?= -c release --static-swift-stdlib --disable-local-rpath -Xswiftc -use-ld=lld \
	-Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic $(if $(SWIFT_SDK),--swift-sdk $(SWIFT_SDK))
BUILD_BIN ?= $(if $(SWIFT_SDK),.build/$(SWIFT_SDK)/release,.build/release)
# The version the programs report (--version; hello, status and the uplink's software_version): VERSION=… (scripts/
# package gives the package's version); without it, baseVersion in Sources/RepProtocol/Host.swift.
# Only from make's command line (`make VERSION=…`), never from the environment (CI images export VERSION); only the
# characters of a Debian version.
VERSION :=
VERSION_FLAGS := $(if $(VERSION),-Xcc -DREPD_BUILD_VERSION='"$(VERSION)"')
INSTALL ?= install

.PHONY: all man install uninstall clean
all:
	@case '$(VERSION)' in *[!A-Za-z0-9.+~:-]*) echo "make: VERSION '$(VERSION)': only A-Z a-z 0-9 . + ~ : -" >&2; exit 2 ;; esac
	for program in $(PROGRAMS); do $(SWIFT) build $(SWIFT_BUILD_FLAGS) $(VERSION_FLAGS) --product $$program || exit 1; done
	$(MAKE) --no-print-directory man

# Manual pages (section 1; repctl's subcommands each get one) from the programs' own --help, by
# swift-argument-parser's generate-manual. It runs the programs, so a cross build takes them from a debug build for
# this machine (the same options and help text), or from MAN_BIN=DIR where a build for this machine already is.
MAN_OUT := .build/man
MAN_BIN ?= $(if $(SWIFT_SDK),.build/debug,$(BUILD_BIN))
man:
	$(SWIFT) build --product generate-manual
	$(if $(and $(SWIFT_SDK),$(filter .build/debug,$(MAN_BIN))),for program in $(PROGRAMS); do $(SWIFT) build --product $$program || exit 1; done)
	rm -rf $(MAN_OUT) && mkdir -p $(MAN_OUT)
	for program in $(PROGRAMS); do \
		.build/debug/generate-manual $(MAN_BIN)/$$program --multi-page --section 1 \
			--date "$$(git log -1 --format=%cs 2>/dev/null || date +%F)" --output-directory $(MAN_OUT) || exit 1; done
	rm -f $(MAN_OUT)/*.help.1  # the generated pages of the implicit `help` subcommand
	sed -i 's/^$$/.Pp/' $(MAN_OUT)/*.1  # a blank line of --help text is a paragraph break in mdoc
	# A subcommand's page is repctl-eval(1), as Debian names them (the generator writes repctl.eval): the file,
	# its title and NAME say repctl-eval, its synopsis still says "repctl eval".
	for page in $(MAN_OUT)/*.*.1; do \
		base=$${page##*/}; base=$${base%.1}; words=$$(echo $$base | tr . ' '); dashed=$$(echo $$base | tr . -); \
		sed -i -e "s/^\.Dt .*/.Dt $$(echo $$dashed | tr a-z A-Z) 1/" -e "s/^\.Nm \"$$words\"$$/.Nm $$dashed/" \
			-e "s/^\.Nm$$/.Nm \"$$words\"/" $$page && mv $$page $(MAN_OUT)/$$dashed.1 || exit 1; done
	sed -i -e '/^\.Xr /s/\./-/2g' -e '/^\.Xr [a-z-]*-help 1/d' $(MAN_OUT)/*.1  # and so are the cross references

# Units name their programs as /usr/local/bin/NAME, the configuration as /etc/repd/… and the documentation as
# /usr/share/doc/repd/…; all three follow the paths here.
install:
	@for program in $(PROGRAMS); do test -x $(BUILD_BIN)/$$program || { echo "$(BUILD_BIN)/$$program: run make first" >&2; exit 1; }; done
	@test -n "$(wildcard $(MAN_OUT)/*.1)" || { echo "$(MAN_OUT): no manual pages: run make first" >&2; exit 1; }
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSCONFDIR)/repd $(DESTDIR)$(UNITDIR) $(DESTDIR)$(UDEVRULESDIR) \
		$(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 755 $(addprefix $(BUILD_BIN)/,$(PROGRAMS)) $(DESTDIR)$(BINDIR)/
	test -e $(DESTDIR)$(SYSCONFDIR)/repd/repd.toml || $(INSTALL) -m 644 $(CONFIG) $(DESTDIR)$(SYSCONFDIR)/repd/repd.toml
	for unit in $(UNITS); do \
		sed -e 's|/usr/local/bin/|$(BINDIR)/|g' -e 's|/etc/repd/|$(SYSCONFDIR)/repd/|g' -e 's|/usr/share/doc/repd/|$(DOCDIR)/|g' $$unit > $(DESTDIR)$(UNITDIR)/$${unit##*/} \
		&& chmod 644 $(DESTDIR)$(UNITDIR)/$${unit##*/} || exit 1; done
	$(INSTALL) -m 644 $(UDEV_RULES) $(DESTDIR)$(UDEVRULESDIR)/
	for file in $(SYSUSERS); do name=$${file##*/}; \
		$(INSTALL) -m 644 $$file $(DESTDIR)$(SYSUSERSDIR)/$${name%.sysusers}.conf || exit 1; done
	$(INSTALL) -m 644 $(DOCS) $(DESTDIR)$(DOCDIR)/
	$(INSTALL) -d $(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 644 $(MAN_OUT)/*.1 $(DESTDIR)$(MANDIR)/man1/

# Leaves /etc/repd/repd.toml (it may have been edited), the user and group, and /var/lib/repd (the event journal).
uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(PROGRAMS)) $(addprefix $(DESTDIR)$(UNITDIR)/,$(notdir $(UNITS))) \
		$(addprefix $(DESTDIR)$(UDEVRULESDIR)/,$(notdir $(UDEV_RULES))) \
		$(addprefix $(DESTDIR)$(SYSUSERSDIR)/,$(patsubst %.sysusers,%.conf,$(notdir $(SYSUSERS)))) \
		$(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(DOCS)))
	rm -f $(foreach program,$(PROGRAMS),$(DESTDIR)$(MANDIR)/man1/$(program).1 $(DESTDIR)$(MANDIR)/man1/$(program)-*.1)
	-rmdir $(DESTDIR)$(DOCDIR)

clean:
	$(SWIFT) package clean
