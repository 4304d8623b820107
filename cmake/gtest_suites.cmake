# One ctest test per GoogleTest suite, for the sanitizer build.
#
# An instrumented test process spends ~0.25 s starting (ASan's shadow memory,
# its globals, LeakSanitizer's scan at exit) whatever it runs: the sanitizer
# suite's ~1,500 tests spent more time starting than testing. There, each
# suite runs in one process (`--gtest_filter=Suite.*`); the Release build
# keeps one process per test (gtest_discover_tests), so a test that leans on
# a fresh process still shows up there first.
#
# Included by tests/CMakeLists.txt: glmrt_discover_suites(target PROPERTIES ...)
# lists the suites after each link, as gtest_discover_tests lists tests.
# Run as a script (cmake -P) by that build step, it writes the ctest file.

if(CMAKE_SCRIPT_MODE_FILE)
  # Inputs: EXECUTABLE, LAUNCHER (may be empty), TARGET, OUT, PROPERTIES (key
  # value pairs); lists come with '|' between items (a build step's ';' would
  # split its command).
  string(REPLACE "|" ";" LAUNCHER "${LAUNCHER}")
  string(REPLACE "|" ";" PROPERTIES "${PROPERTIES}")
  execute_process(COMMAND ${LAUNCHER} ${EXECUTABLE} --gtest_list_tests
                  OUTPUT_VARIABLE listing RESULT_VARIABLE status ERROR_VARIABLE errors
                  TIMEOUT 60)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${EXECUTABLE} --gtest_list_tests failed (${status}): ${errors}")
  endif()
  string(REPLACE "\n" ";" lines "${listing}")
  set(script "")
  foreach(line IN LISTS lines)
    # Suite lines start in column 0 and end with '.', optionally followed by
    # "  # TypeParam = ..."; test lines are indented.
    if(line MATCHES "^([A-Za-z_][A-Za-z0-9_/]*)\\.( .*)?$")
      set(suite "${CMAKE_MATCH_1}")
      set(name "${TARGET}:${suite}")
      set(command "")
      foreach(part IN LISTS LAUNCHER ITEMS "${EXECUTABLE}" "--gtest_filter=${suite}.*")
        string(APPEND command " [==[${part}]==]")
      endforeach()
      string(APPEND script "add_test([==[${name}]==]${command})\n")
      if(PROPERTIES)
        set(properties "")
        foreach(part IN LISTS PROPERTIES)
          string(APPEND properties " [==[${part}]==]")
        endforeach()
        string(APPEND script "set_tests_properties([==[${name}]==] PROPERTIES${properties})\n")
      endif()
    endif()
  endforeach()
  file(WRITE "${OUT}" "${script}")
  return()
endif()

set(GLMRT_GTEST_SUITES_SCRIPT ${CMAKE_CURRENT_LIST_FILE})

function(glmrt_discover_suites target)
  cmake_parse_arguments(ARG "" "" "PROPERTIES" ${ARGN})
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake")
  get_target_property(launcher ${target} CROSSCOMPILING_EMULATOR)
  if(NOT launcher)
    set(launcher "")
  endif()
  string(REPLACE ";" "|" launcher_arg "${launcher}")
  string(REPLACE ";" "|" properties_arg "${ARG_PROPERTIES}")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -D "EXECUTABLE=$<TARGET_FILE:${target}>" -D "LAUNCHER=${launcher_arg}"
            -D "TARGET=${target}" -D "OUT=${out}" -D "PROPERTIES=${properties_arg}"
            -P ${GLMRT_GTEST_SUITES_SCRIPT}
    BYPRODUCTS ${out}
    VERBATIM)
  # ctest reads the file if the build wrote it (as gtest_discover_tests does).
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites_include.cmake")
  file(WRITE ${include_file}
       "if(EXISTS \"${out}\")\n  include(\"${out}\")\nelse()\n"
       "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
endfunction()
