# git_version.cmake - run at every build (cmake -P): write OUT from IN with
# the version and the git commit of SRC, only when it changed, so a commit
# is picked up without reconfiguring and an unchanged tree rebuilds nothing.
execute_process(COMMAND git -C ${SRC} rev-parse --short=12 HEAD
                OUTPUT_VARIABLE PAGELAB_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT PAGELAB_GIT_COMMIT)
  set(PAGELAB_GIT_COMMIT "unknown")
else()
  execute_process(COMMAND git -C ${SRC} status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(dirty)
    string(APPEND PAGELAB_GIT_COMMIT "-dirty")
  endif()
endif()
configure_file(${IN} ${OUT} @ONLY)
