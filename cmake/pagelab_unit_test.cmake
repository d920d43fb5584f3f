# pagelab_unit_test.cmake - pagelab_unit_test(DIR NAME [VMAP_MAPLE] [LABELS l...]):
# one cmocka test, tests/unit/DIR/test_NAME.c, built as test_NAME against the
# static library and registered as CTest test NAME. DIR is the layer of src/
# the test exercises (base lib mm vmalloc machine trace), or cross for
# whole-machine behaviour. VMAP_MAPLE registers it a second time as NAME_maple
# with PAGELAB_VM_DESIGN=maple (the vmalloc helpers then build seed 004's
# maple index where a test asks for v6.18). LABELS: CTest labels, e.g.
# "concurrency" for the tests with real threads that `make test-tsan` runs.
function(pagelab_unit_test dir name)
  cmake_parse_arguments(T "VMAP_MAPLE" "" "LABELS" ${ARGN})
  set(src ${PROJECT_SOURCE_DIR}/tests/unit/${dir}/test_${name}.c)
  if(NOT EXISTS ${src})
    message(FATAL_ERROR "pagelab_unit_test: no ${src}")
  endif()
  add_executable(test_${name} ${src})
  target_include_directories(test_${name} PRIVATE ${PROJECT_SOURCE_DIR}/src
                             ${PROJECT_SOURCE_DIR}/tests/unit/include)
  target_link_libraries(test_${name} PRIVATE pagelab PkgConfig::CMOCKA)
  set(env "PAGELAB_FIXTURES=${PROJECT_SOURCE_DIR}/tests/fixtures")
  add_test(NAME ${name} COMMAND test_${name})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}")
  if(T_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
  endif()
  if(T_VMAP_MAPLE)
    add_test(NAME ${name}_maple COMMAND test_${name})
    set_tests_properties(${name}_maple PROPERTIES ENVIRONMENT "${env};PAGELAB_VM_DESIGN=maple")
    if(T_LABELS)
      set_tests_properties(${name}_maple PROPERTIES LABELS "${T_LABELS}")
    endif()
  endif()
endfunction()
