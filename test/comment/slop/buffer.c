#include <stdlib.h>
#include <string.h>

/* Define the buffer struct */
typedef struct {
  char *data;
  size_t len;
} buffer;

/* Function to create a buffer */
buffer *buffer_new(size_t cap) {
  /* Allocate the buffer */
  buffer *b = malloc(sizeof(buffer));
  /* Allocate the data */
  b->data = malloc(cap);
  /* Set the length to zero */
  b->len = 0;
  /* Return the buffer */
  return b;
}

/* Function to free the buffer */
void buffer_free(buffer *b) {
  /* Free the data */
  free(b->data);
  /* Free the buffer */
  free(b);
}
