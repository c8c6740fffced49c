# Debian packages, one per install component (cpack -G DEB in the build directory, or the
# package-deb target): ntprofd, ntprofctl, ntprof-collector and ntprof-dev. The folders' install()
# rules name the component of each file; this module adds what every package carries besides
# (copyright, changelog, man pages and bash completion made from --help) and the packages' control
# data. docs/packages.md says what each package holds and how they are tested.
include(GNUInstallDirs)

set(NTPROF_PACKAGING_DIR ${PROJECT_SOURCE_DIR}/deploy/packaging)
set(NTPROF_DEBIAN_REVISION 1)
set(NTPROF_PACKAGES ntprofd ntprofctl ntprof-collector ntprof-dev)
# The date of the changelog entry (RFC 2822): move it with the version.
set(NTPROF_CHANGELOG_DATE "Tue, 01 Dec 2026 12:00:00 +0000")
set(NTPROF_MAINTAINER "ntprof maintainers <maintainers@users.noreply.a-seed-521d4ed3.example>")

# copyright and changelog.Debian.gz in /usr/share/doc/<package>, as Debian policy wants them.
foreach(package ${NTPROF_PACKAGES})
  set(NTPROF_PACKAGE ${package})
  configure_file(${NTPROF_PACKAGING_DIR}/changelog.in ${CMAKE_BINARY_DIR}/packaging/${package}/changelog @ONLY)
  add_custom_command(
    OUTPUT ${CMAKE_BINARY_DIR}/packaging/${package}/changelog.Debian.gz
    COMMAND sh -c "gzip -9n -c changelog > changelog.Debian.gz"
    DEPENDS ${CMAKE_BINARY_DIR}/packaging/${package}/changelog
    WORKING_DIRECTORY ${CMAKE_BINARY_DIR}/packaging/${package}
    VERBATIM)
  list(APPEND ntprof_package_docs ${CMAKE_BINARY_DIR}/packaging/${package}/changelog.Debian.gz)
  install(FILES ${NTPROF_PACKAGING_DIR}/copyright
                ${CMAKE_BINARY_DIR}/packaging/${package}/changelog.Debian.gz
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package} COMPONENT ${package})
endforeach()

# ntprof_cli_docs(TARGET COMPONENT SECTION SUMMARY): the man page of TARGET (help2man, with every
# subcommand's --help) and its bash completion, both generated from the built binary.
# In NTPROF_CLI_DOCS_DIR: TARGET.SECTION.gz and TARGET.bash (tests/packaging checks the latter).
set(NTPROF_CLI_DOCS_DIR ${CMAKE_BINARY_DIR}/packaging/cli)
function(ntprof_cli_docs target component section summary)
  set(out ${NTPROF_CLI_DOCS_DIR})
  set(docs ${NTPROF_PACKAGING_DIR}/cli_docs.sh)
  add_custom_command(
    OUTPUT ${out}/${target}.${section}.gz ${out}/${target}.bash
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out}
    COMMAND ${docs} manpage $<TARGET_FILE:${target}> ${target} ${section} ${summary}
            ${out}/${target}.${section}.gz
    COMMAND ${docs} completion $<TARGET_FILE:${target}> ${target} ${out}/${target}.bash
    DEPENDS ${target} ${docs}
    COMMENT "man page and bash completion of ${target} from its --help"
    VERBATIM)
  add_custom_target(${target}_cli_docs ALL DEPENDS ${out}/${target}.${section}.gz ${out}/${target}.bash)
  install(FILES ${out}/${target}.${section}.gz
          DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section} COMPONENT ${component})
  install(FILES ${out}/${target}.bash RENAME ${target}
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions
          COMPONENT ${component})
endfunction()

find_program(NTPROF_HELP2MAN help2man)
if(NTPROF_HELP2MAN)
  ntprof_cli_docs(ntprofd ntprofd 8 "NVMe-oF profiling agent (eBPF)")
  ntprof_cli_docs(ntprofctl ntprofctl 1 "ntprof command-line client: sessions, reports, compare")
  ntprof_cli_docs(ntprof-collector ntprof-collector 1 "ntprof collector: live join of agent streams")
else()
  message(WARNING "help2man not found (deploy/install-deps.sh installs it): the packages built "
                  "here have no man pages and no bash completion")
endif()
add_custom_target(ntprof_package_docs ALL DEPENDS ${ntprof_package_docs})

# conffiles: every file a package installs under /etc (lintian: file-in-etc-not-marked-as-conffile).
set(ntprof_conffiles_ntprofd /etc/default/ntprofd /etc/ntprof/ntprofd.conf)
set(ntprof_conffiles_ntprofctl /etc/ntprof/ntprofctl.conf)
set(ntprof_conffiles_ntprof-collector /etc/default/ntprof-collector)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ntprof)
set(CPACK_PACKAGE_VENDOR "ntprof")
set(CPACK_PACKAGE_CONTACT "${NTPROF_MAINTAINER}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  message(WARNING "CMAKE_INSTALL_PREFIX is ${CMAKE_INSTALL_PREFIX}: packages built from this tree "
                  "install there, and their units name binaries there; Debian packages want /usr")
endif()
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${NTPROF_PACKAGES})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${NTPROF_DEBIAN_REVISION})
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)

set(CPACK_DEBIAN_NTPROFD_PACKAGE_NAME ntprofd)
set(CPACK_DEBIAN_NTPROFD_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_NTPROFD_PACKAGE_SUGGESTS "ntprofctl")
set(CPACK_DEBIAN_NTPROFD_DESCRIPTION "NVMe-oF per-command latency agent (eBPF)
ntprofd runs on NVMe over Fabrics hosts and targets. With eBPF on an
unmodified kernel it stamps sampled commands at the boundaries of their
stages (host block layer, host driver, network, target driver, storage)
and records them to .ntp files or streams them to ntprof-collector.
The systemd unit ntprofd.service is installed but neither enabled nor
started: set the role in /etc/default/ntprofd first.")

set(CPACK_DEBIAN_NTPROFCTL_PACKAGE_NAME ntprofctl)
set(CPACK_DEBIAN_NTPROFCTL_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_NTPROFCTL_DESCRIPTION "ntprof command-line client
ntprofctl reports where the time of NVMe over Fabrics commands went,
stage by stage, from recordings of ntprofd or from sessions of
ntprof-collector; it starts, stops, watches, compares and exports
sessions.")

set(CPACK_DEBIAN_NTPROF-COLLECTOR_PACKAGE_NAME ntprof-collector)
set(CPACK_DEBIAN_NTPROF-COLLECTOR_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_NTPROF-COLLECTOR_PACKAGE_SUGGESTS "ntprofctl, prometheus")
set(CPACK_DEBIAN_NTPROF-COLLECTOR_DESCRIPTION "ntprof collector: live join of ntprofd record streams
ntprof-collector receives the record streams of every ntprofd agent,
joins host and target halves live, keeps sessions on disk, and serves
watch, reports and exports to ntprofctl and metrics to Prometheus.
The systemd unit ntprof-collector.service is installed but neither
enabled nor started.")

set(CPACK_DEBIAN_NTPROF-DEV_PACKAGE_NAME ntprof-dev)
set(CPACK_DEBIAN_NTPROF-DEV_PACKAGE_SECTION devel)
# Architecture-dependent: it carries libntprof_probe.so (the contract as a C ABI).
# ntprof_probe.h includes <sys/sdt.h>; the Python binding (ntprof_probe.py) needs python3.
set(CPACK_DEBIAN_NTPROF-DEV_PACKAGE_DEPENDS "systemtap-sdt-dev, python3")
set(CPACK_DEBIAN_NTPROF-DEV_DESCRIPTION "ntprof probe contract for user-space NVMe-oF applications
Headers (<ntprof/ntprof_probe.h>) for SPDK targets and hosts, and
libntprof_probe.so with a Python binding for other user-space stacks,
that let ntprofd profile them with the same stages, sampling and join
as the Linux NVMe over Fabrics drivers.")

# Maintainer scripts (deploy/packaging/<package>/) and conffiles of the packages that have them.
foreach(package ntprofd ntprofctl ntprof-collector)
  string(TOUPPER ${package} upper)
  set(extra "")
  foreach(script postinst prerm postrm)
    if(EXISTS ${NTPROF_PACKAGING_DIR}/${package}/${script})
      list(APPEND extra ${NTPROF_PACKAGING_DIR}/${package}/${script})
    endif()
  endforeach()
  string(REPLACE ";" "\n" conffiles "${ntprof_conffiles_${package}}")
  file(WRITE ${CMAKE_BINARY_DIR}/packaging/${package}/conffiles "${conffiles}\n")
  list(APPEND extra ${CMAKE_BINARY_DIR}/packaging/${package}/conffiles)
  set(CPACK_DEBIAN_${upper}_PACKAGE_CONTROL_EXTRA ${extra})
endforeach()

include(CPack)

# The packages from a build tree: cmake --build BUILD --target package-deb (= cpack -G DEB).
add_custom_target(package-deb
  COMMAND ${CMAKE_CPACK_COMMAND} -G DEB --config ${CMAKE_BINARY_DIR}/CPackConfig.cmake
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR}
  COMMENT "Debian packages in ${CPACK_PACKAGE_DIRECTORY}"
  VERBATIM)
add_dependencies(package-deb ntprofd ntprofctl ntprof-collector ntprof_package_docs)
if(NTPROF_HELP2MAN)
  add_dependencies(package-deb ntprofd_cli_docs ntprofctl_cli_docs ntprof-collector_cli_docs)
endif()
