find_package(PkgConfig)

PKG_CHECK_MODULES(PC_GR_MIMODET gnuradio-mimodet)

FIND_PATH(
    GR_MIMODET_INCLUDE_DIRS
    NAMES gnuradio/mimodet/api.h
    HINTS $ENV{MIMODET_DIR}/include
        ${PC_MIMODET_INCLUDEDIR}
    PATHS ${CMAKE_INSTALL_PREFIX}/include
          /usr/local/include
          /usr/include
)

FIND_LIBRARY(
    GR_MIMODET_LIBRARIES
    NAMES gnuradio-mimodet
    HINTS $ENV{MIMODET_DIR}/lib
        ${PC_MIMODET_LIBDIR}
    PATHS ${CMAKE_INSTALL_PREFIX}/lib
          ${CMAKE_INSTALL_PREFIX}/lib64
          /usr/local/lib
          /usr/local/lib64
          /usr/lib
          /usr/lib64
          )

include("${CMAKE_CURRENT_LIST_DIR}/gnuradio-mimodetTarget.cmake")

INCLUDE(FindPackageHandleStandardArgs)
FIND_PACKAGE_HANDLE_STANDARD_ARGS(GR_MIMODET DEFAULT_MSG GR_MIMODET_LIBRARIES GR_MIMODET_INCLUDE_DIRS)
MARK_AS_ADVANCED(GR_MIMODET_LIBRARIES GR_MIMODET_INCLUDE_DIRS)
