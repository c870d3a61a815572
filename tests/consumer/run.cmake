# Installs the build into a fresh prefix under the build folder, checks that the model headers reach no
# Z3 or CUDA header, builds tests/consumer against the installed package, runs it and compares its
# schedule with the installed tbcheck command's; then imports the installed Python package (when built).
# cmake -DBUILD_DIR=... -DCONSUMER_DIR=... -DWORK=... -DCXX=... [-DLAUNCHER=...] [-DPYTHON=... -DPYTHON_DIR=...] -P run.cmake
foreach(v BUILD_DIR CONSUMER_DIR WORK CXX)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run.cmake: -D${v}=... is required")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err WORKING_DIRECTORY "${WORK}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(prefix "${WORK}/prefix")
run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(f bin/tbcheck include/tbcheck/model/simulator.hpp include/tbcheck/search/distinguish.hpp)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
file(GLOB_RECURSE config "${prefix}/*/tbcheckConfig.cmake")
if(NOT config)
  message(FATAL_ERROR "no tbcheckConfig.cmake under ${prefix}")
endif()

# Every header a model user can include, and what they include in turn: no Z3, no CUDA.
file(GLOB model_headers RELATIVE "${prefix}/include" "${prefix}/include/tbcheck/model/*.hpp")
set(all "")
foreach(h IN LISTS model_headers)
  string(APPEND all "#include \"${h}\"\n")
endforeach()
file(WRITE "${WORK}/all_model_headers.cpp" "${all}")
run("${CXX}" -std=c++20 -M -I "${prefix}/include" "${WORK}/all_model_headers.cpp")
string(TOLOWER "${out}" deps)
if(deps MATCHES "(z3[^ ]*\\.h|cuda[^ ]*\\.h)")
  message(FATAL_ERROR "a model header reaches ${CMAKE_MATCH_1}:\n${out}")
endif()

set(launcher "")
if(LAUNCHER)
  set(launcher "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
endif()
run("${CMAKE_COMMAND}" -S "${CONSUMER_DIR}" -B "${WORK}/build" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${prefix}"
    "-DCMAKE_CXX_COMPILER=${CXX}" ${launcher})
run("${CMAKE_COMMAND}" --build "${WORK}/build")

run("${WORK}/build/reduce_device")
if(NOT out MATCHES "^reduced sms [0-9]+\n$")
  message(FATAL_ERROR "reduce_device printed: ${out}")
endif()

# The consumer's schedule must be the installed command's for the same scenario.
run("${WORK}/build/predict_small")
string(JSON scenario GET "${out}" scenario)
string(JSON mine GET "${out}" schedule kernels)
file(WRITE "${WORK}/scenario.json" "${scenario}")
run("${prefix}/bin/tbcheck" predict "${WORK}/scenario.json" --hypothesis alg1 --json)
string(JSON theirs GET "${out}" kernels)
string(JSON blocks LENGTH "${theirs}" 0 blocks)
if(NOT mine STREQUAL theirs OR blocks LESS 1)
  message(FATAL_ERROR "the consumer's schedule differs from tbcheck predict's:\n${mine}\n---\n${theirs}")
endif()
message(STATUS "consumer: ${blocks} blocks of k1 placed as tbcheck predict places them")

# The installed Python package, imported from the install tree alone.
if(PYTHON AND PYTHON_DIR)
  set(ENV{PYTHONPATH} "${prefix}/${PYTHON_DIR}")
  # Lines, not semicolons: a ';' would split the argument as a CMake list.
  run("${PYTHON}" -c "import sys, tbcheck\nprint(tbcheck.__file__)\nprint(len(tbcheck.predict(sys.argv[1])))"
      "${WORK}/scenario.json")
  string(JSON k2 GET "${scenario}" kernels 1 blocks)
  string(JSON k1 GET "${scenario}" kernels 0 blocks)
  math(EXPR total "${k1} + ${k2}")
  if(NOT out MATCHES "^${prefix}/${PYTHON_DIR}/tbcheck/__init__.py\n${total}\n$")
    message(FATAL_ERROR "the installed Python package: ${out}")
  endif()
  message(STATUS "python: tbcheck imported from ${prefix}/${PYTHON_DIR}")
endif()
