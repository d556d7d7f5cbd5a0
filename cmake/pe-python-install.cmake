# `cmake --install` of the pe Python package (component python): into the
# folder the install prefix's Python searches (cmake/pe_python_dir.py), or
# PE_PYTHON_INSTALL_DIR when it was set at configure time (relative to the
# prefix, or absolute). When the interpreter does not search that folder,
# one line says how to reach it. Set by the install(CODE) before it:
# PE_PY_PACKAGE (the built package folder), PE_PY_EXE, PE_PY_HELPER,
# PE_PY_DIR (PE_PYTHON_INSTALL_DIR; may be empty).
if(PE_PY_DIR)
  if(IS_ABSOLUTE "${PE_PY_DIR}")
    set(_pe_py_dest "${PE_PY_DIR}")
  else()
    set(_pe_py_dest "${CMAKE_INSTALL_PREFIX}/${PE_PY_DIR}")
  endif()
  set(_pe_py_found unknown)
else()
  execute_process(COMMAND "${PE_PY_EXE}" "${PE_PY_HELPER}" "${CMAKE_INSTALL_PREFIX}"
                  OUTPUT_VARIABLE _pe_py_out RESULT_VARIABLE _pe_py_rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _pe_py_rc EQUAL 0)
    message(FATAL_ERROR "pe: cannot ask ${PE_PY_EXE} where the Python package goes (exit ${_pe_py_rc})")
  endif()
  string(REPLACE "\n" ";" _pe_py_out "${_pe_py_out}")
  list(GET _pe_py_out 0 _pe_py_dest)
  list(GET _pe_py_out 1 _pe_py_found)
endif()
file(INSTALL DESTINATION "${_pe_py_dest}" TYPE DIRECTORY FILES "${PE_PY_PACKAGE}"
     PATTERN "__pycache__" EXCLUDE)
if(_pe_py_found STREQUAL "not-found" AND "$ENV{DESTDIR}" STREQUAL "")
  message(STATUS "pe: ${PE_PY_EXE} does not search ${_pe_py_dest}; to import pe: export PYTHONPATH=${_pe_py_dest}")
endif()
