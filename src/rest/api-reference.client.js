// Starts Swagger UI on the page /docs serves; a file of its own because that page runs no inline script.
const root = document.getElementById('swagger-ui');
window.SwaggerUIBundle({
  domNode: root,
  url: root.dataset.openapi,
  // The default would send the document to validator.swagger.io; the page reaches only this server.
  validatorUrl: null,
  deepLinking: true,
  filter: true,
  displayRequestDuration: true,
  persistAuthorization: false,
});
